//go:build idlecore

package main

import (
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/haade/haade/testing/stats"
)

// This file needs an idle core: a busy machine gives the spin below a
// fraction of one (0.25-0.29 were seen under load), so it is not in the
// unit tier. .ci/run runs it alone, with nothing else of its own running:
//
//	go test -tags idlecore -count=1 -run '^TestCoresMedian$' ./testing/sidebyside/

// TestCoresMedian meters a shell that spins on one core for three seconds
// and then sleeps for one: the median second holds about one core busy
// (never two: it has one thread), though CPU over wall time is lower.
func TestCoresMedian(t *testing.T) {
	cmd := exec.Command("sh", "-c", `timeout 3 sh -c 'while :; do :; done'; sleep 1`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := meterTrees([]int{cmd.Process.Pid}, 50*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	got := stats.Median(m.coresBySecond())
	if got < 0.5 || got > 1.1 {
		t.Errorf("cores in the median second %.2f: want about one", got)
	}
	// Three or four whole seconds (the sleep's is cut when its last sample
	// comes a little before a whole second has passed): the spin's two first
	// hold about one core each, and a fourth, the sleep's, about none.
	by := m.coresBySecond()
	if len(by) < 3 || len(by) > 4 {
		t.Fatalf("cores by second %v: want 3 or 4 seconds", by)
	}
	for _, c := range by[:2] {
		if c < 0.5 || c > 1.1 {
			t.Errorf("cores by second %v: a second of the spin has %.2f cores, want about one", by, c)
		}
	}
	if len(by) == 4 && by[3] > 0.5 {
		t.Errorf("cores by second %v: the sleep's second has %.2f cores, want about none", by, by[3])
	}
	// The machine's cores include the spin's, and never pass the machine.
	mach := m.machineCoresBySecond()
	if len(mach) != len(by) {
		t.Fatalf("machine cores by second %v, the tree's %v: want as many seconds", mach, by)
	}
	for i := range by {
		if mach[i] < by[i]-0.05 || mach[i] > float64(runtime.NumCPU())+0.05 {
			t.Errorf("second %d: the machine kept %.2f cores busy and the tree %.2f: want at least the tree's, at most %d", i, mach[i], by[i], runtime.NumCPU())
		}
	}
}
