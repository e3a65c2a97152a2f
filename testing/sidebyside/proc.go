package main

import (
	"os"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// pageSize is the unit of rss in /proc/PID/stat.
var pageSize = int64(os.Getpagesize())

// procStat is what one read of /proc/PID/stat gives.
type procStat struct {
	ppid int
	cpu  time.Duration // utime + stime
	rss  int64         // bytes
}

// statOf reads a process's /proc/PID/stat with procfs.
func statOf(p procfs.Proc) (procStat, bool) {
	st, err := p.Stat()
	if err != nil {
		return procStat{}, false
	}
	return procStat{
		ppid: st.PPID,
		cpu:  time.Duration(st.UTime+st.STime) * time.Second / clockTicks,
		rss:  int64(st.RSS) * pageSize,
	}, true
}

// readStat reads /proc/PID/stat of one process.
func readStat(pid int) (procStat, bool) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procStat{}, false
	}
	return statOf(p)
}

// descendants returns root and every process below it.
func descendants(root int) map[int]procStat {
	all := map[int]procStat{}
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		if st, ok := statOf(p); ok {
			all[p.PID] = st
		}
	}
	kids := map[int][]int{}
	for pid, st := range all {
		kids[st.ppid] = append(kids[st.ppid], pid)
	}
	tree := map[int]procStat{}
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st, ok := all[pid]
		if !ok {
			continue
		}
		tree[pid] = st
		stack = append(stack, kids[pid]...)
	}
	return tree
}

// treeMeter samples process trees: the CPU time of every process ever seen
// in them (the last value read of each, so a process that exits loses at
// most one interval) less what it had used at the first sample, and the
// peak of the trees' summed resident set.
type treeMeter struct {
	mu      sync.Mutex
	roots   []int
	cpu     map[int]time.Duration
	base    map[int]time.Duration // at the first sample: long-running processes' past
	peakRSS int64
	series  []cpuAt // the trees' CPU at each sample
	stop    chan struct{}
	done    chan struct{}
}

// meterTree starts sampling the tree under root every interval.
func meterTree(root int, interval time.Duration) *treeMeter {
	return meterTrees([]int{root}, interval)
}

// meterTrees starts sampling the trees under roots every interval, for a
// contender whose work runs beside its own process tree (Flink's JVMs): the
// CPU counts from this call.
func meterTrees(roots []int, interval time.Duration) *treeMeter {
	m := &treeMeter{roots: roots, cpu: map[int]time.Duration{}, base: map[int]time.Duration{}, stop: make(chan struct{}), done: make(chan struct{})}
	m.sample()
	for pid, c := range m.cpu {
		m.base[pid] = c
	}
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *treeMeter) sample() {
	tree := map[int]procStat{}
	for _, root := range m.roots {
		for pid, st := range descendants(root) {
			tree[pid] = st
		}
	}
	machine := machineBusy()
	var rss int64
	m.mu.Lock()
	defer m.mu.Unlock()
	for pid, st := range tree {
		rss += st.rss
		if st.cpu > m.cpu[pid] {
			m.cpu[pid] = st.cpu
		}
	}
	m.peakRSS = max(m.peakRSS, rss)
	var total time.Duration
	for pid, c := range m.cpu {
		total += c - m.base[pid]
	}
	m.series = append(m.series, cpuAt{at: time.Now(), cpu: total, machine: machine})
}

// machineBusy is the CPU time every core of the machine has spent on
// anything but idling or waiting for I/O since boot (/proc/stat), or 0 when
// it cannot be read.
func machineBusy() time.Duration {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	st, err := fs.Stat()
	if err != nil {
		return 0
	}
	c := st.CPUTotal
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return time.Duration(busy * float64(time.Second))
}

// cpuAt is the trees' CPU time, and the machine's, at a sample.
type cpuAt struct {
	at           time.Time
	cpu, machine time.Duration
}

// coresBySecond is, for each whole second metered in order, the cores the
// trees kept busy in it: a run's profile over time (a JVM's or Prism's
// start, the read, the last commit). Empty before a whole second.
func (m *treeMeter) coresBySecond() []float64 {
	return m.perSecond(func(c cpuAt) time.Duration { return c.cpu })
}

// machineCoresBySecond is coresBySecond for the whole machine: the
// contender, the services, the harness and anything else. Where it is near
// the machine's cores, the contender could not have had more.
func (m *treeMeter) machineCoresBySecond() []float64 {
	return m.perSecond(func(c cpuAt) time.Duration { return c.machine })
}

// perSecond turns a counter of CPU time sampled in m.series into the cores
// it grew by in each whole second.
func (m *treeMeter) perSecond(of func(cpuAt) time.Duration) []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rates []float64
	if len(m.series) == 0 {
		return nil
	}
	prev := m.series[0]
	for _, s := range m.series[1:] {
		if d := s.at.Sub(prev.at); d >= time.Second {
			rates = append(rates, (of(s)-of(prev)).Seconds()/d.Seconds())
			prev = s
		}
	}
	return rates
}

// Stop takes a last sample and stops; it returns the trees' CPU time and
// peak resident set. A second call returns the same.
func (m *treeMeter) Stop() (cpu time.Duration, peakRSS int64) {
	select {
	case <-m.stop:
	default:
		close(m.stop)
		<-m.done
		m.sample()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for pid, c := range m.cpu {
		cpu += c - m.base[pid]
	}
	return cpu, m.peakRSS
}

// cpuOf is the CPU time of the processes whose pids are given, and 0 for
// those that are gone: for the services' processes, read before and after a
// run.
func cpuOf(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		for _, st := range descendants(pid) {
			total += st.cpu
		}
	}
	return total
}
