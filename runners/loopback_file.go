package runners

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

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
// now) that are empty and that no other process holds open. Holding the
// file open is not enough to tell this process's own: Beam drops its
// *os.File, so a garbage collection may have closed it before the run
// ends (a loaded CI machine showed it). A file that existed before the
// run, or that another process still holds open, is never touched. Where
// /proc cannot be read, nothing is removed.
func loopbackFiles() (remove func()) {
	dir := filepath.Clean(os.TempDir())
	pattern := filepath.Join(dir, "beamloopbackworker-*")
	before, _ := filepath.Glob(pattern)
	return func() {
		after, _ := filepath.Glob(pattern)
		var created []string
		for _, f := range after {
			if !slices.Contains(before, f) {
				if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
					created = append(created, f)
				}
			}
		}
		if len(created) == 0 {
			return
		}
		held, ok := heldByOthers()
		if !ok {
			return
		}
		for _, f := range created {
			if !held[f] {
				_ = os.Remove(f)
			}
		}
	}
}

// heldByOthers gives the files that processes other than this one hold
// open; ok is false where /proc cannot be read.
func heldByOthers() (held map[string]bool, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, false
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, false
	}
	held = map[string]bool{}
	self := os.Getpid()
	for _, p := range procs {
		if p.PID == self {
			continue
		}
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, t := range targets {
			if strings.HasPrefix(filepath.Base(t), "beamloopbackworker-") {
				held[t] = true
			}
		}
	}
	return held, true
}
