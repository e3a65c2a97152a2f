package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
)

// At a clean stop the dead-letter table, which had no rows for the last
// windows, records every offset read, so the next start does not read
// again what the tables already hold. Before, it kept the offsets of its
// last progress record (up to a minute old).
func TestCleanStopRecordsDeadLetterProgress(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(kafkatest.Sample(300, 5, 0, nil)) // valid events only: no dead letter
	args := []string{
		"--brokers=" + e.cfg.Kafka.Brokers[0], "--catalog-uri=" + e.cfg.Catalog.URI, "--warehouse=" + e.cfg.Catalog.Warehouse,
		"--commit-interval=1s", "--metrics-addr=",
	}
	var out, errb cmdtest.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, func(string) string { return "" }, &out, &errb) }()
	waitRows := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for e.rowsInTables() < n {
			select {
			case code := <-done:
				t.Fatalf("run returned %d before the signal; stderr:\n%s", code, errb.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("streaming run committed %d of %d rows in 60s", e.rowsInTables(), n)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitRows(e.count())
	time.Sleep(2 * time.Second) // the dead letters' first progress record is behind us
	e.produce(kafkatest.Sample(300, 6, 0, nil))
	waitRows(e.count())
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
	want := icebergio.Offsets{}
	for p, offs := range e.produced {
		want.Set(e.cfg.Kafka.Topic, int32(p), int64(len(offs)))
	}
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ident := range []string{e.cfg.Table, e.cfg.DLQTable} {
		st, err := icebergio.Stat(context.Background(), cat, ident, e.cfg.Pipeline)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, st.Offsets); diff != "" {
			t.Errorf("%s offsets after the clean stop (-want +got):\n%s", ident, diff)
		}
	}
}
