//go:build cluster

package k8se2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

// repo is a clone of the working tree, pushed to the git server in the cluster.
type repo struct {
	t      *testing.T
	dir    string
	remote string
}

func (r repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=HAADE CI", "GIT_AUTHOR_EMAIL=ci@haade.invalid",
		"GIT_COMMITTER_NAME=HAADE CI", "GIT_COMMITTER_EMAIL=ci@haade.invalid", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository of the working tree's files (tracked and untracked
// but not ignored, as they are now, edits included), in one commit.
func newRepo(t *testing.T, remote string) repo {
	t.Helper()
	root := cmdtest.MustRepoRoot(t)
	r := repo{t: t, dir: t.TempDir(), remote: remote}
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = root
	files, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	tar := exec.Command("sh", "-c", `tar -C "$1" --null -T - -cf - | tar -C "$2" -xf -`, "sh", root, r.dir)
	tar.Stdin = strings.NewReader(string(files))
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("copy the working tree: %v\n%s", err, out)
	}
	r.git("init", "--quiet", "--initial-branch=main")
	r.git("add", "--all")
	head, _ := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	r.git("commit", "--quiet", "-m", "HAADE's working tree at "+strings.TrimSpace(string(head)))
	return r
}

// commit commits the clone's changes and returns the commit.
func (r repo) commit(msg string) string {
	r.t.Helper()
	r.git("commit", "--quiet", "--all", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// push pushes main to the git server.
func (r repo) push() {
	r.t.Helper()
	r.git("push", "--quiet", r.remote, "main")
}

// edit replaces old by new in one file of the clone; old must be there once.
func (r repo) edit(file, old, new string) {
	r.t.Helper()
	p := filepath.Join(r.dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		r.t.Fatal(err)
	}
	if n := strings.Count(string(b), old); n != 1 {
		r.t.Fatalf("%s holds %q %d times, want once", file, old, n)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		r.t.Fatal(err)
	}
}
