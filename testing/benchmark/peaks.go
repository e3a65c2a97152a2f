package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/prometheus/client_golang/prometheus"
)

// peaks samples, every 100 ms during a run, the goroutines and when the
// Kafka read last counted records, and every second the TCP connections
// this process holds to the broker's ports: reading the kernel's TCP table
// walks all of it, and at 10 a second it took a tenth of the run's CPU.
type peaks struct {
	done chan struct{}
	out  chan [3]int64 // goroutines, connections, last read (unix ms)
}

// readCounter is a registry of kafkaio's records-read counter alone: the
// read's kgo client metrics, also in kafkaio.Collectors, cost far more to
// gather every 100 ms.
func readCounter() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	for _, c := range kafkaio.Collectors() {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		keep := false
		for d := range ch {
			keep = keep || strings.Contains(d.String(), `"haade_kafka_records_read_total"`)
		}
		if keep {
			_ = reg.Register(c)
		}
	}
	return reg
}

// recordsRead sums the counter of reg.
func recordsRead(reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// startPeaks starts sampling; ports are the broker ports whose
// connections count (none: connections are not counted).
func startPeaks(ports map[int]bool) *peaks {
	p := &peaks{done: make(chan struct{}), out: make(chan [3]int64, 1)}
	reg := readCounter()
	go func() {
		var g, c, last int64
		var read float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for tick := 0; ; tick++ {
			g = max(g, int64(runtime.NumGoroutine()))
			if len(ports) > 0 && tick%10 == 0 {
				c = max(c, int64(connections(ports)))
			}
			if n := recordsRead(reg); n > read {
				read, last = n, time.Now().UnixMilli()
			}
			select {
			case <-p.done:
				p.out <- [3]int64{g, c, last}
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// stop ends the sampling and returns the peaks and the last read.
func (p *peaks) stop() (goroutines, conns int, lastRead int64) {
	close(p.done)
	v := <-p.out
	return int(v[0]), int(v[1]), v[2]
}

// brokerPorts are the ports of addrs, when the broker is another
// process's (given); nil otherwise.
func brokerPorts(addrs []string, given bool) map[int]bool {
	if !given {
		return nil
	}
	ports := map[int]bool{}
	for _, a := range addrs {
		if _, p, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				ports[n] = true
			}
		}
	}
	return ports
}

// connections counts the established TCP connections of this process whose
// remote port is one of ports: its sockets (/proc/self/fd) matched with the
// kernel's table (/proc/self/net/tcp and tcp6) by inode, as ss -p would.
func connections(ports map[int]bool) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			mine[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "01" || !mine[fs[9]] {
				continue
			}
			_, hexPort, ok := strings.Cut(fs[2], ":")
			if port, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && ports[int(port)] {
				n++
			}
		}
		f.Close()
	}
	return n
}

// lastSnapshot is the timestamp of the newest snapshot of ident, in unix
// milliseconds; 0 when it has none.
func lastSnapshot(ctx context.Context, cat catalog.Catalog, ident string) (int64, error) {
	tbl, err := icebergio.LoadTable(ctx, cat, ident)
	if err != nil {
		return 0, err
	}
	var ms int64
	for _, s := range tbl.Metadata().Snapshots() {
		ms = max(ms, s.TimestampMs)
	}
	return ms, nil
}
