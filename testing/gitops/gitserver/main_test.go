package main

import (
	"crypto/rand"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const backend = "/usr/lib/git-core/git-http-backend"

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_TERMINAL_PROMPT=0", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPushThenClone: a commit pushed over HTTP to a repository the server
// created is what a clone over HTTP gets, and a second, chunked push moves
// main.
func TestPushThenClone(t *testing.T) {
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("no %s (Debian's git package): %v", backend, err)
	}
	root := t.TempDir()
	if err := initBare(filepath.Join(root, "haade.git")); err != nil {
		t.Fatal(err)
	}
	// A second start leaves the repository as it is.
	if err := initBare(filepath.Join(root, "haade.git")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler(root, backend))
	defer srv.Close()
	url := srv.URL + "/haade.git"

	work := t.TempDir()
	git(t, work, "init", "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(work, "a.yaml"), []byte("interval: 10s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "a.yaml")
	git(t, work, "commit", "--quiet", "-m", "one")
	git(t, work, "push", "--quiet", url, "main")
	if err := os.WriteFile(filepath.Join(work, "a.yaml"), []byte("interval: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 3 MiB that do not compress: git sends this push chunked (its
	// http.postBuffer is 1 MiB), which CGI alone refuses.
	big := make([]byte, 3<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "big.bin")
	git(t, work, "commit", "--quiet", "--all", "-m", "two")
	git(t, work, "push", "--quiet", url, "main")
	want := git(t, work, "rev-parse", "HEAD")

	if got := strings.Fields(git(t, work, "ls-remote", url, "refs/heads/main"))[0]; got != want {
		t.Errorf("ls-remote main = %s, want %s", got, want)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, work, "clone", "--quiet", url, clone)
	b, err := os.ReadFile(filepath.Join(clone, "a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "interval: 5s\n" {
		t.Errorf("the clone's a.yaml = %q, want the second commit's", b)
	}
	if got, err := os.ReadFile(filepath.Join(clone, "big.bin")); err != nil || string(got) != string(big) {
		t.Errorf("the clone's big.bin: %d bytes (%v), want the 3 MiB pushed", len(got), err)
	}
}

func TestRefusesARepositoryPath(t *testing.T) {
	if err := run(":0", t.TempDir(), "a/b.git", "/bin/true"); err == nil || !strings.Contains(err.Error(), "--repos") {
		t.Errorf("run with --repos=a/b.git: %v, want an error naming --repos", err)
	}
}
