package main

import (
	"context"
	"strings"
	"testing"
	"time"

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
	r := e.startStreaming(t)
	r.waitRows(e.count())

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
	r.waitRows(e.count())
	if !strings.Contains(r.errb.String(), "partitions added to the topic") {
		t.Errorf("no log line names the new partitions; stderr:\n%s", r.errb.String())
	}
	r.stop()
	e.checkExactlyOnce(badSet())
}
