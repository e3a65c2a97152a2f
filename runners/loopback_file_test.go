package runners

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// A run on --runner=direct leaves no beamloopbackworker-* file in the
// temporary directory (Beam's universal runner makes one per loopback job
// and leaves it), while a file of the same name that another process made
// stays.
func TestRunLeavesNoLoopbackFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	other := filepath.Join(tmp, "beamloopbackworker-another-process")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Beam drops the *os.File of the file it makes: no garbage collection
	// may close it during this run, or it would be a young file no process
	// holds, which stays (TestLoopbackFilesRemovesOnlyTheRunsOwn).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	p, s := beam.NewPipelineWithRoot()
	beam.Create(s, "a", "b")
	if _, err := Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "beamloopbackworker-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != other {
		t.Errorf("beamloopbackworker files after the run: %v; want only %s", left, other)
	}
}

// loopbackFiles removes the empty files created between its call and the
// call of what it returns that this process holds open, and those no
// process holds once older than loopbackGrace (a garbage collection closed
// Beam's); it leaves those that existed before, a file with data, one
// another process holds open, and a young one no process holds.
func TestLoopbackFilesRemovesOnlyTheRunsOwn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path := func(name string) string { return filepath.Join(tmp, "beamloopbackworker-"+name) }
	create := func(name string, data []byte) *os.File {
		f, err := os.Create(path(name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		return f
	}
	create("before", nil).Close()
	remove := loopbackFiles()
	create("closed", nil).Close()
	old := time.Now().Add(-loopbackGrace - time.Minute)
	if err := os.Chtimes(path("closed"), old, old); err != nil {
		t.Fatal(err)
	}
	create("young", nil).Close()
	open := create("open", nil)
	defer open.Close()
	create("data", []byte("x")).Close()
	held := create("held", nil)
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{held}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	held.Close()
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()

	remove()

	for name, want := range map[string]bool{"before": true, "closed": false, "young": true, "open": false, "data": true, "held": true} {
		_, err := os.Stat(path(name))
		if got := err == nil; got != want {
			t.Errorf("beamloopbackworker-%s exists: %v, want %v", name, got, want)
		}
	}
}
