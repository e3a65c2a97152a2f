package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestBuildNamesBinariesAfterPackages(t *testing.T) {
	dir := t.TempDir()
	bins, err := Build(dir, "../../pipelines/mkbucket")
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 1 || !strings.HasSuffix(bins[0], "/mkbucket") {
		t.Fatalf("Build = %v, want one path ending in /mkbucket", bins)
	}
	out, _ := exec.Command(bins[0], "--help").CombinedOutput()
	if !strings.Contains(string(out), "Usage") && !strings.Contains(string(out), "usage") {
		t.Errorf("%s --help printed %q: not the built command", bins[0], out)
	}
	if _, err := Build(dir, "./no/such/package"); err == nil || !strings.Contains(err.Error(), "go build ./no/such/package") {
		t.Errorf("Build of a missing package: %v, want an error naming it", err)
	}
}

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "%d-%d\n", i, j)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Errorf("%d lines, want 800", n)
	}
}

func TestRepoRootIsTheModulesDirectory(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if root != want {
		t.Errorf("RepoRoot from testing/cmdtest = %s, want %s", root, want)
	}
	if got := MustRepoRoot(t); got != root {
		t.Errorf("MustRepoRoot = %s, RepoRoot = %s", got, root)
	}
	t.Chdir(t.TempDir())
	if root, err := RepoRoot(); err == nil {
		t.Errorf("RepoRoot outside the repository = %s, want an error", root)
	}
}

func TestBuilderPassesFlagsAndEnv(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []Builder{
		{Flags: []string{"-nosuchflag"}, Nice: 1},
		{Env: []string{"GOFLAGS=-nosuchflag"}},
	} {
		if _, err := b.Build(dir, "../../pipelines/mkbucket"); err == nil || !strings.Contains(err.Error(), "nosuchflag") {
			t.Errorf("%+v.Build: %v, want go build's complaint about -nosuchflag", b, err)
		}
	}
}

func TestScriptRunsTheServiceScript(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "testing/services"), 0o755); err != nil {
		t.Fatal(err)
	}
	sh := "echo \"$PWD $SVC $*\"; [ \"$1\" = ok ]\n"
	if err := os.WriteFile(filepath.Join(root, "testing/services/fake.sh"), []byte(sh), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Script(root, []string{"SVC=kafka"}, "fake", "ok", "2")
	if err != nil || out != root+" kafka ok 2\n" {
		t.Errorf("Script = %q, %v; want %q, nil", out, err, root+" kafka ok 2\n")
	}
	_, err = Script(root, nil, "fake", "fail")
	if err == nil || !strings.Contains(err.Error(), "testing/services/fake.sh fail") || !strings.Contains(err.Error(), root+"  fail") {
		t.Errorf("Script of a failing script: %v, want an error naming it, with its output", err)
	}
}

func TestTailKeepsTheLastLinesShort(t *testing.T) {
	long := strings.Repeat("x", 700)
	if got, want := Tail("a\nb\nc\n"+long+"\n", 2), "c\n"+long[:600]+"..."; got != want {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	if got := Tail("a\nb\n", 5); got != "a\nb" {
		t.Errorf("Tail of fewer lines than asked = %q, want them all", got)
	}
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(path, 2); got != "two\nthree" {
		t.Errorf("TailFile = %q, want the last two lines", got)
	}
	if got := TailFile(path+".missing", 2); !strings.Contains(got, "no such file") {
		t.Errorf("TailFile of a missing file = %q, want the error", got)
	}
}
