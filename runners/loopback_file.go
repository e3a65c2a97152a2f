package runners

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Beam's universal runner (runnerlib.Execute, v2.77), which Prism's runner
// calls, creates an empty "beamloopbackworker-*" file in os.TempDir() for
// every job it runs in loopback mode (--runner=direct and prism without
// --endpoint): the environment must name a worker binary, which loopback
// never runs. It neither closes nor removes it (Beam issue #27569), so
// every run left one behind: 164 after a day of checks.
//
// A run on Prism therefore points TMPDIR at a directory of its own while it
// runs (runTemp), and removes that directory, with whatever Beam or
// anything else in the run made there, when it ends. Runs in one process
// share the directory; the last to end removes it and puts TMPDIR back.
// The directory is named haade-run-PID-*: a process killed in the middle of
// a run leaves its directory, and the next run in the same temporary
// directory removes those of processes that no longer exist.
//
// Listing the temporary directory before and after a run, which this
// replaced, could not tell this run's file from another process's once a
// garbage collection had closed Beam's dropped *os.File, and CI's tiers
// still left 242.
var runTemp struct {
	sync.Mutex
	n      int    // runs in progress
	dir    string // this process's directory, while n > 0
	old    string // TMPDIR before the first run
	hadOld bool
}

// runTempPrefix starts the name of a run's temporary directory.
const runTempPrefix = "haade-run-"

// privateTemp points TMPDIR at this process's run directory until the
// returned function is called. Where the directory cannot be made, TMPDIR
// stays as it is.
func privateTemp() (done func()) {
	runTemp.Lock()
	defer runTemp.Unlock()
	if runTemp.n == 0 {
		base := os.TempDir()
		sweepRunTemps(base)
		dir, err := os.MkdirTemp(base, fmt.Sprintf("%s%d-", runTempPrefix, os.Getpid()))
		if err != nil {
			return func() {}
		}
		runTemp.old, runTemp.hadOld = os.LookupEnv("TMPDIR")
		runTemp.dir = dir
		os.Setenv("TMPDIR", dir)
	}
	runTemp.n++
	var once sync.Once
	return func() { once.Do(endRunTemp) }
}

func endRunTemp() {
	runTemp.Lock()
	defer runTemp.Unlock()
	runTemp.n--
	if runTemp.n > 0 {
		return
	}
	if runTemp.hadOld {
		os.Setenv("TMPDIR", runTemp.old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	os.RemoveAll(runTemp.dir)
	runTemp.dir = ""
}

// sweepRunTemps removes the run directories in base of processes that no
// longer exist. One whose process runs, or whose owner cannot be told, stays.
func sweepRunTemps(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, runTempPrefix+"*"))
	for _, d := range dirs {
		pid, ok := runTempPID(filepath.Base(d))
		if !ok || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

// runTempPID is the process id in a run directory's name, haade-run-PID-*.
func runTempPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, runTempPrefix)
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}
