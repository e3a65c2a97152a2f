package kafkaio

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// countingPool is recordSlices with a count of the slices it lent again.
type countingPool struct {
	recordPool
	gets, reused atomic.Int64
}

func (c *countingPool) GetRecords(n int) []kgo.Record {
	c.gets.Add(1)
	if s, ok := c.p.Get().(*[]kgo.Record); ok && cap(*s) >= n {
		c.reused.Add(1)
		return (*s)[:n]
	}
	return make([]kgo.Record, n)
}

// TestRecycledRecordsKeepValues reads 20,000 records of 200 batches in small polls
// through the read's pool, keeping each record's value slice as a read's
// Batch does and recycling the records after every poll, as the read does.
// The slices come back to the pool and are lent again, and every value kept
// is still the one produced: the pool reuses the structs, never the bytes.
func TestRecycledRecordsKeepValues(t *testing.T) {
	cfg := startKafka(t, 1)
	// 200 produce calls of 100 records: 200 batches, each decoded into a
	// slice of its own, so that slices come back while later ones are lent.
	const n, batch = 20000, 100
	pcl := client(t, cfg)
	var want []string
	for i := 0; i < n; i += batch {
		var recs []*kgo.Record
		for j := i; j < i+batch; j++ {
			v := value("pool", 0, j)
			recs = append(recs, &kgo.Record{Partition: 0, Value: []byte(v)})
			want = append(want, v)
		}
		if err := pcl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	pool := &countingPool{}
	cl := client(t, cfg, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.WithPools(pool), kgo.FetchMaxPartitionBytes(16<<10))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var kept [][]byte
	for len(kept) < n {
		fs := cl.PollRecords(ctx, 500)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { kept = append(kept, r.Value) })
		recycle(fs)
	}
	for i, v := range kept {
		if got := string(v); got != want[i] {
			t.Fatalf("record %d: value %q after recycling, want %q", i, got, want[i])
		}
	}
	if pool.reused.Load() == 0 {
		t.Errorf("%d slices lent, none of them again: records are not recycled into the pool", pool.gets.Load())
	}
}
