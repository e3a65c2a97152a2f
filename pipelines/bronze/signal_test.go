package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
)

// SIGTERM on a streaming run: the reads stop, the last window commits, and
// the process exits 0, with every record read so far in a table once.
func TestSignalStopsCleanly(t *testing.T) {
	e := newEnv(t, 4)
	e.produce(sample(2000, 9))
	args := []string{
		"--brokers=" + e.cfg.Kafka.Brokers[0], "--catalog-uri=" + e.cfg.Catalog.URI, "--warehouse=" + e.cfg.Catalog.Warehouse,
		"--commit-interval=1s", "--metrics-addr=",
	}
	var out, errb cmdtest.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, func(string) string { return "" }, &out, &errb) }()

	// Wait until the streaming run has committed everything produced so far.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if n := e.rowsInTables(); n == e.count() {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("run returned %d before the signal; stderr:\n%s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("streaming run committed %d of %d rows in 60s", e.rowsInTables(), e.count())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}
	e.checkExactlyOnce(badSet())
}

func (e *env) rowsInTables() int {
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		return 0
	}
	n := 0
	for _, id := range []string{e.cfg.Table, e.cfg.DLQTable} {
		if st, err := icebergio.Stat(context.Background(), cat, id, e.cfg.Pipeline); err == nil {
			n += int(st.Rows)
		}
	}
	return n
}
