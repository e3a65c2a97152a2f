package kafkaio

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/wait"
	"github.com/twmb/franz-go/pkg/kgo"
)

// from is the one partition of the consumer tests' groups, read from at.
func from(at int64) []Partition { return []Partition{{ID: 0, Start: at, End: unbounded}} }

// drain polls c until it has taken n records of partition 0 or the
// deadline passes, and returns their values in order. c.next moves as a
// read call moves it: past every record handed over.
func drain(t *testing.T, c *consumer, n int) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		fs := c.poll(context.Background(), wallClock{}, time.Now().Add(time.Second))
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != c.next[0] {
				t.Fatalf("record at offset %d, want %d: a record skipped or repeated", r.Offset, c.next[0])
			}
			c.next[0] = r.Offset + 1
			got = append(got, fmt.Sprintf("%d:%s", r.Partition, r.Value))
		})
	}
	return got
}

// TestConsumerPrefetchLosesNothing takes a partition's consumer, reads part
// of it, gives it back and takes it again where it stopped: the poll that
// was held ahead meanwhile must continue the partition with no record lost
// or repeated, and a take at another offset must restart there.
func TestConsumerPrefetchLosesNothing(t *testing.T) {
	cfg := startKafka(t, 1)
	// Many polls, so that one is held ahead across the take and put: record
	// batches of 1 KiB, fetched one at a time (a fetch returns at least one
	// whole batch, so one batch of 1000 records was one poll).
	cfg.FetchMaxPartitionBytes = 1 << 10
	want := produce(t, client(t, cfg, kgo.ProducerBatchMaxBytes(1<<10)), "pf", map[int32]int{0: 1_000})
	read := uniqueName(t)
	t.Cleanup(func() { closeRead(read) })
	cfg = cfg.withDefaults()

	c, err := takeConsumer(read, cfg, 0, from(0))
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, c, 250)
	// The polling goroutine fetches ahead of what was taken: it holds the
	// next poll, and the client has fetched the one after it.
	wait.For(t, 20*time.Second, func() error {
		if !c.held.Load() || c.cl.BufferedFetchRecords() == 0 {
			return fmt.Errorf("no poll held ahead (held %v, %d records buffered in the client, %d taken)", c.held.Load(), c.cl.BufferedFetchRecords(), len(got))
		}
		return nil
	})
	putConsumer(read, 0, c)

	again, err := takeConsumer(read, cfg, 0, from(c.next[0]))
	if err != nil {
		t.Fatal(err)
	}
	if again != c {
		t.Errorf("take at the offset it stopped at: a new consumer, want the one given back")
	}
	got = append(got, drain(t, again, len(want)-len(got))...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records across a put and take (-want +got):\n%s", diff)
	}
	putConsumer(read, 0, again)

	// The runner moved the restriction: a take elsewhere reads from there.
	moved, err := takeConsumer(read, cfg, 0, from(600))
	if err != nil {
		t.Fatal(err)
	}
	if moved == again {
		t.Errorf("take at another offset: the old consumer, positioned at %d", again.next[0])
	}
	select {
	case <-again.done:
	default:
		t.Errorf("the consumer replaced by a take elsewhere still polls")
	}
	if diff := cmp.Diff(want[600:], drain(t, moved, 400)); diff != "" {
		t.Errorf("records after a take at 600 (-want +got):\n%s", diff)
	}
	moved.close()
	select {
	case <-moved.done:
	case <-time.After(5 * time.Second):
		t.Fatal("close returned with its polling goroutine still running")
	}
}

// TestConsumerPollEndsAtDeadline polls a partition with nothing to read: the
// poll must return empty at its deadline, not wait for a record.
func TestConsumerPollEndsAtDeadline(t *testing.T) {
	cfg := startKafka(t, 1).withDefaults()
	read := uniqueName(t)
	c, err := takeConsumer(read, cfg, 0, from(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	clk := newFakeClock()
	fs := c.poll(context.Background(), clk, clk.Now().Add(300*time.Millisecond))
	if waits, fired := clk.timers(); !slices.Equal(waits, []time.Duration{300 * time.Millisecond}) || fired != 1 {
		t.Errorf("poll of an empty partition timed %v (%d ran out), want 300ms, run out: it returned at its deadline", waits, fired)
	}
	if n := fs.NumRecords(); n != 0 {
		t.Errorf("poll of an empty partition: %d records", n)
	}
}
