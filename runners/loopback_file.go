package runners

import (
	"os"
	"path/filepath"
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
// removeLoopbackFiles removes those that this process still holds open,
// which are the ones it created: another process's file, whose job may not
// have been staged yet, is never touched. Where /proc cannot be read it
// does nothing.
func removeLoopbackFiles() {
	self, err := procfs.Self()
	if err != nil {
		return
	}
	targets, err := self.FileDescriptorTargets()
	if err != nil {
		return
	}
	dir := filepath.Clean(os.TempDir())
	for _, t := range targets {
		if filepath.Dir(t) == dir && strings.HasPrefix(filepath.Base(t), "beamloopbackworker-") && !strings.HasSuffix(t, " (deleted)") {
			_ = os.Remove(t)
		}
	}
}
