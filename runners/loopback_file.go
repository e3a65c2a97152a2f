package runners

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Beam's universal runner (runnerlib.Execute, v2.77), which Prism's runner
// calls, creates an empty "beamloopbackworker-*" file in the temporary
// directory for every job it runs in loopback mode (--runner=direct and
// prism without --endpoint): the environment must name a worker binary,
// which loopback never runs. It neither closes nor removes it (Beam issue
// #27569), so every run left one behind: 164 after a day of checks.
//
// loopbackFiles returns, before a run, the function that removes after it
// the files the run left: those created since (not in the listing taken
// now), empty, that this process holds open. Beam drops its *os.File, so
// a garbage collection may have closed this process's file before the run
// ends (a loaded CI machine showed it): a new empty file that no process
// holds open is removed too, once it is older than loopbackGrace. A
// younger one may be another process's, between Beam's creating it and
// staging it (runnerlib.Execute reads it there), and stays. A file that
// existed before the run, or that another process holds open, is never
// touched. Where /proc cannot be read, nothing is removed.
func loopbackFiles() (remove func()) {
	dir := filepath.Clean(os.TempDir())
	pattern := filepath.Join(dir, "beamloopbackworker-*")
	before, _ := filepath.Glob(pattern)
	return func() {
		after, _ := filepath.Glob(pattern)
		created := map[string]time.Time{}
		for _, f := range after {
			if !slices.Contains(before, f) {
				if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
					created[f] = st.ModTime()
				}
			}
		}
		if len(created) == 0 {
			return
		}
		mine, others, ok := holders()
		if !ok {
			return
		}
		for f, mtime := range created {
			if mine[f] || (!others[f] && time.Since(mtime) > loopbackGrace) {
				_ = os.Remove(f)
			}
		}
	}
}

// loopbackGrace is how long a process may take from Beam's creating its
// loopback file to staging it: runnerlib.Execute dials the job service for
// up to 2 minutes in between.
const loopbackGrace = 3 * time.Minute

// holders gives the beamloopbackworker files this process holds open, and
// those other processes do; ok is false where /proc cannot be read.
func holders() (mine, others map[string]bool, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, nil, false
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, nil, false
	}
	mine, others = map[string]bool{}, map[string]bool{}
	self := os.Getpid()
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			if p.PID == self {
				return nil, nil, false
			}
			continue // gone, or not ours to read
		}
		held := others
		if p.PID == self {
			held = mine
		}
		for _, t := range targets {
			if strings.HasPrefix(filepath.Base(t), "beamloopbackworker-") {
				held[t] = true
			}
		}
	}
	return mine, others, true
}
