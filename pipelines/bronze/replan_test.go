package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Partitions added to the topic while bronze streams are read, from their
// earliest offset, without a restart of the process; nothing is lost or
// stored twice.
func TestPartitionsAddedWhileStreaming(t *testing.T) {
	old := partitionWatchInterval
	partitionWatchInterval = 300 * time.Millisecond
	t.Cleanup(func() { partitionWatchInterval = old })
	e := newEnv(t, 2)
	e.produce(sample(200, 11))
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
				t.Fatalf("streaming run committed %d of %d rows in 60s; stderr:\n%s", e.rowsInTables(), n, errb.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitRows(e.count())

	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cfg.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreatePartitions(context.Background(), 2, e.cfg.Kafka.Topic); err != nil {
		t.Fatal(err)
	}
	e.produce(sample(400, 12)) // round robin: half of them in the new partitions
	if len(e.produced) != 4 {
		t.Fatalf("records landed in %d partitions, want 4", len(e.produced))
	}
	waitRows(e.count())
	if !strings.Contains(errb.String(), "partitions added to the topic") {
		t.Errorf("no log line names the new partitions; stderr:\n%s", errb.String())
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
