package main

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

// statOf reads this process's parent and a resident set that
// runtime's own figure bounds from below.
func TestStatOfSelf(t *testing.T) {
	p, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := statOf(p)
	if !ok {
		t.Fatal("statOf(self): not read")
	}
	if st.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", st.ppid, os.Getppid())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if st.rss < 1<<20 || st.rss > int64(ms.Sys)*4 {
		t.Errorf("rss %d bytes: want between 1 MiB and 4 times the runtime's %d bytes", st.rss, ms.Sys)
	}
	if _, ok := descendants(os.Getpid())[os.Getpid()]; !ok {
		t.Error("descendants(self) does not hold self")
	}
}

// machine's memory is /proc/meminfo's MemTotal, in GiB, as before procfs.
func TestMachineMemory(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	var kb int64
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	want := fmt.Sprintf("%d cores, %.0f GiB, %s/%s", runtime.NumCPU(), float64(kb)/(1<<20), runtime.GOOS, runtime.GOARCH)
	if got := machine(); got != want || !regexp.MustCompile(`^\d+ cores, \d+ GiB, `).MatchString(got) {
		t.Errorf("machine() = %q, want %q", got, want)
	}
}
