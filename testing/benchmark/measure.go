package main

import (
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// usage is a point in the process's resource use.
type usage struct {
	wall time.Time
	cpu  time.Duration // user + system, all threads
}

func now() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return usage{wall: time.Now(), cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
}

// maxRSS is getrusage's ru_maxrss in bytes: the process's peak resident set
// since it started (Linux reports KiB).
func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss << 10
}

// status reads /proc/self/status with procfs (sizes in bytes).
func status() (procfs.ProcStatus, bool) {
	p, err := procfs.Self()
	if err != nil {
		return procfs.ProcStatus{}, false
	}
	st, err := p.NewStatus()
	return st, err == nil
}

// rss returns the current resident set size in bytes.
func rss() int64 {
	if st, ok := status(); ok {
		return int64(st.VmRSS)
	}
	return -1
}

// resetPeakRSS resets the kernel's high-water mark of the resident set (and
// with it ru_maxrss) to the current RSS, so that the peak read later is the
// run's own, not the preload's. It reports whether the kernel allowed it
// (Linux >= 4.0, writing 5 to /proc/self/clear_refs).
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns the high-water mark of the resident set in bytes (VmHWM),
// falling back to ru_maxrss.
func peakRSS() int64 {
	if st, ok := status(); ok && st.VmHWM > 0 {
		return int64(st.VmHWM)
	}
	return maxRSS()
}

// profileHeapPeaks writes a heap profile to path each time the live heap
// after a collection reaches a new high, until stop is closed: the last one
// written shows what was live at the run's peak.
func profileHeapPeaks(path string, stop <-chan struct{}) {
	var high uint64
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(s)
		if live := s[0].Value.Uint64(); live > high+high/20 {
			high = live
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}
}
