package main

import (
	"os"
	"strings"
	"testing"
)

// loadavg prints /proc/loadavg's first three fields as the kernel does.
// The kernel updates them every 5 s, so the file is read before and after.
func TestLoadavgIsTheKernelsText(t *testing.T) {
	read := func() string {
		b, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			t.Skipf("no /proc/loadavg: %v", err)
		}
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	for range 3 {
		before := read()
		got := loadavg()
		if got == before || got == read() {
			return
		}
	}
	t.Errorf("loadavg() = %q, /proc/loadavg says %q", loadavg(), read())
}
