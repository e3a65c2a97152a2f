package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
)

// SIGTERM on a streaming run: the reads stop, the last window commits, and
// the process exits 0, with every record read so far in a table once.
func TestSignalStopsCleanly(t *testing.T) {
	e := newEnv(t, 4)
	e.produce(sample(2000, 9))
	r := e.startStreaming(t)
	// Wait until the streaming run has committed everything produced so far.
	r.waitRows(e.count())
	r.stop()
	e.checkExactlyOnce(badSet())
}

// streamRun is a streaming bronze run of an env, in this process, as main
// runs it.
type streamRun struct {
	t         *testing.T
	e         *env
	out, errb cmdtest.Buffer
	done      chan int
}

// startStreaming starts a streaming run over e's Kafka and tables, with
// 1s commit intervals.
func (e *env) startStreaming(t *testing.T, extra ...string) *streamRun {
	t.Helper()
	args := append([]string{
		"--brokers=" + e.cfg.Kafka.Brokers[0], "--catalog-uri=" + e.cfg.Catalog.URI, "--warehouse=" + e.cfg.Catalog.Warehouse,
		"--commit-interval=1s", "--metrics-addr=",
	}, extra...)
	r := &streamRun{t: t, e: e, done: make(chan int, 1)}
	go func() { r.done <- run(args, func(string) string { return "" }, &r.out, &r.errb) }()
	return r
}

// waitRows waits up to 60s until the tables hold n rows; the run must not
// end meanwhile.
func (r *streamRun) waitRows(n int) {
	r.t.Helper()
	wait.For(r.t, 60*time.Second, func() error {
		if have := r.e.rowsInTables(); have < n {
			select {
			case code := <-r.done:
				r.t.Fatalf("run returned %d before the signal; stderr:\n%s", code, r.errb.String())
			default:
			}
			return fmt.Errorf("streaming run committed %d of %d rows; stderr:\n%s", have, n, r.errb.String())
		}
		return nil
	})
}

// stop sends SIGTERM and wants exit 0 within 30s.
func (r *streamRun) stop() {
	r.t.Helper()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		r.t.Fatal(err)
	}
	select {
	case code := <-r.done:
		if code != 0 {
			r.t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, r.errb.String())
		}
	case <-time.After(30 * time.Second):
		r.t.Fatal("no exit within 30s of SIGTERM")
	}
}

func (e *env) rowsInTables() int {
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		return 0
	}
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	n := 0
	for _, id := range []string{e.cfg.Table, e.cfg.DLQTable} {
		if st, err := icebergio.Stat(context.Background(), cat, id, e.cfg.Pipeline); err == nil {
			n += int(st.Rows)
		}
	}
	return n
}
