package runners

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// A run on --runner=direct leaves nothing in the temporary directory (Beam's
// universal runner makes a beamloopbackworker-* file per loopback job and
// leaves it), puts TMPDIR back, and leaves another process's file alone.
func TestRunLeavesNoLoopbackFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	other := filepath.Join(tmp, "beamloopbackworker-another-process")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	beam.Create(s, "a", "b")
	if _, err := Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != other {
		t.Errorf("the temporary directory after the run holds %v; want only %s", left, other)
	}
	if got := os.Getenv("TMPDIR"); got != tmp {
		t.Errorf("TMPDIR after the run = %q, want %q", got, tmp)
	}
}

// Runs in one process share a run directory, which the last to end removes;
// a run removes the run directories of processes that no longer exist, and
// leaves those of processes that run and anything not a run directory.
func TestPrivateTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("sleep", "60")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	defer alive.Process.Kill()
	mkdir := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "beamloopbackworker-1"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	killed := mkdir(fmt.Sprintf("haade-run-%d-1", dead.Process.Pid))
	running := mkdir(fmt.Sprintf("haade-run-%d-1", alive.Process.Pid))
	unrelated := mkdir("haade-run-notapid")

	done1 := privateTemp()
	dir := os.Getenv("TMPDIR")
	if filepath.Dir(dir) != tmp || dir == tmp {
		t.Fatalf("TMPDIR during a run = %q, want a directory in %s", dir, tmp)
	}
	if pid, ok := runTempPID(filepath.Base(dir)); !ok || pid != os.Getpid() {
		t.Errorf("run directory %s: pid %d, %v; want this process's, %d", dir, pid, ok, os.Getpid())
	}
	done2 := privateTemp()
	if got := os.Getenv("TMPDIR"); got != dir {
		t.Errorf("a second run's TMPDIR = %q, want the first's %q", got, dir)
	}
	f, err := os.CreateTemp("", "beamloopbackworker-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	done1()
	done1() // a second call does nothing
	if _, err := os.Stat(f.Name()); err != nil {
		t.Errorf("with a run still going, its directory's file: %v", err)
	}
	done2()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after the last run, %s: %v; want it gone", dir, err)
	}
	if got := os.Getenv("TMPDIR"); got != tmp {
		t.Errorf("TMPDIR after the runs = %q, want %q", got, tmp)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the run directory of a process that exited, %s: %v; want it removed", killed, err)
	}
	for _, d := range []string{running, unrelated} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v; want it kept", d, err)
		}
	}
}
