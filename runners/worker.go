package runners

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StartWorker prepares a worker process of a remote runner (started by
// Beam's boot program with --worker=true): call it before beam.Init.
//
//   - Beam's boot program copies the staged worker binary (about 200 MB)
//     to /tmp/binNNNN/worker for every worker it starts and never removes
//     it. A running program does not need its file, so the worker removes
//     its own copy at once (only that exact layout, never another path).
//   - When the boot program that started it dies (its TaskManager was
//     killed, or cancelled it), the worker exits instead of running on as
//     an orphan: it polls its parent process every second.
func StartWorker() {
	removeBootCopy()
	go exitWithParent(os.Getppid(), time.Second)
}

// removeBootCopy removes this executable when it is boot's temporary copy.
func removeBootCopy() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if dir, ok := bootCopyDir(exe); ok {
		if err := os.RemoveAll(dir); err != nil {
			slog.Warn("could not remove the boot program's copy of the worker binary", "path", exe, "err", err)
		}
	}
}

// bootCopyDir returns the directory of boot's copy when exe is one:
// /tmp/bin<digits>/worker (os.MkdirTemp("/tmp/", "bin*") in Beam's
// container/boot.go).
func bootCopyDir(exe string) (string, bool) {
	dir := filepath.Dir(exe)
	if filepath.Base(exe) != "worker" || filepath.Dir(dir) != "/tmp" {
		return "", false
	}
	suffix, ok := strings.CutPrefix(filepath.Base(dir), "bin")
	if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" {
		return "", false
	}
	return dir, true
}

// exitWithParent exits the process once its parent is no longer parent
// (the process was re-parented: its parent died).
func exitWithParent(parent int, every time.Duration) {
	if parent <= 1 {
		return
	}
	for range time.Tick(every) {
		if os.Getppid() != parent {
			slog.Error("the boot program that started this worker is gone; exiting", "parent", parent)
			os.Exit(1)
		}
	}
}
