package main

import (
	"bufio"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// procStatus reads a "kB" field of /proc/self/status, in bytes.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return -1
		}
		return n << 10
	}
	return -1
}

// rss returns the current resident set size in bytes.
func rss() int64 { return procStatus("VmRSS") }

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
	if v := procStatus("VmHWM"); v > 0 {
		return v
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
