package flinke2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/testing/wait"
)

// TestWorkerProcessSweep runs testing/services/flink/worker-process.sh (the PROCESS
// environment's command on the test cluster) with a stand-in boot program, kills it with
// SIGKILL, and checks that the next start (here its --sweep) removes the staging directory it
// left and kills the boot program it left running, while a live copy's directory stays.
func TestWorkerProcessSweep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs("../services/flink/worker-process.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in boot keeps its arguments (and so --semi_persist_dir) in its command line.
	boot := filepath.Join(dir, "boot")
	if err := os.WriteFile(boot, []byte("#!/usr/bin/env bash\nsleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmp, "HAADE_FLINK_BOOT="+boot)

	start := func() (*exec.Cmd, string, int) {
		t.Helper()
		before, _ := filepath.Glob(filepath.Join(tmp, "haade-worker-*"))
		cmd := exec.Command(script, "--id=1", "--provision_endpoint=localhost:1")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var dir string
		var pid int
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := wait.Until(ctx, func() error {
			after, _ := filepath.Glob(filepath.Join(tmp, "haade-worker-*"))
			for _, d := range after {
				if slices.Contains(before, d) {
					continue
				}
				if b, err := os.ReadFile(filepath.Join(d, ".boot")); err == nil && len(b) > 0 {
					if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
						t.Fatalf("%s/.boot: %v", d, err)
					}
					dir = d
					return nil
				}
			}
			return errors.New("no new staging directory with a .boot")
		}); err != nil {
			t.Fatal("worker-process.sh made no staging directory with its boot's pid in 20 s")
		}
		t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
		return cmd, dir, pid
	}

	killed, killedDir, killedBoot := start()
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.Wait()
	// What a SIGKILL leaves: the directory, and boot running.
	if _, err := os.Stat(killedDir); err != nil {
		t.Fatalf("after SIGKILL: %v", err)
	}
	if !alive(killedBoot) {
		t.Fatal("after SIGKILL the boot program is gone already: the test proves nothing")
	}

	live, liveDir, liveBoot := start() // its own start sweeps too
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = wait.Until(ctx, func() error { // the sweep kills it
		if alive(killedBoot) {
			return errors.New("the killed copy's boot program runs")
		}
		return nil
	})
	if _, err := os.Stat(killedDir); !os.IsNotExist(err) {
		t.Errorf("the killed copy's directory %s is still there (%v)", killedDir, err)
	}
	if alive(killedBoot) {
		t.Errorf("the killed copy's boot %d still runs", killedBoot)
	}

	sweep := exec.Command(script, "--sweep")
	sweep.Env = env
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("worker-process.sh --sweep: %v\n%s", err, out)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("a sweep removed the live copy's directory: %v", err)
	}
	if !alive(liveBoot) {
		t.Error("a sweep killed the live copy's boot")
	}

	// SIGTERM: the copy cleans up after itself.
	if err := live.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	live.Wait()
	if _, err := os.Stat(liveDir); !os.IsNotExist(err) {
		t.Errorf("after SIGTERM the directory %s is still there (%v)", liveDir, err)
	}
}

// alive says the process runs: it exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
