package kafkaio

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadSkewedPartitionsDropsNothing reads partitions that advance at
// very different speeds, windows the batches into short fixed windows and
// counts each window through a GroupByKey. Prism v2.77 lets the fastest
// group's watermark overtake records that a slower group emitted in
// a bundle still running (docs/DESIGN.md, "Runners"); those records would be late and
// dropped by the GroupByKey. The sum over all windows must be every record.
//
// With the watermark table turned off (readFn.shared forced to false), both
// cases lost records in every run tried (e.g. 50,040 of 50,070, 10 of 65,130).
func TestReadSkewedPartitionsDropsNothing(t *testing.T) {
	tests := []struct {
		name string
		// preload: records per partition before the read starts
		preload map[int32]int
		// during: records per partition per round, produced while reading
		during map[int32]int
		rounds int
		// readers: the groups the partitions are dealt into
		readers int
	}{
		{"one partition 50k, seven with 10", map[int32]int{0: 50_000, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10}, nil, 0, DefaultReaders},
		{"produce while reading, one partition fast", map[int32]int{0: 5_000, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10},
			map[int32]int{0: 2_000, 3: 1, 6: 1}, 30, DefaultReaders},
		{"three readers, produce while reading, one partition fast", map[int32]int{0: 5_000, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10, 7: 10},
			map[int32]int{0: 2_000, 3: 1, 5: 1}, 30, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := startKafka(t, 8)
			cl := client(t, cfg)
			want := len(produce(t, cl, "pre", tc.preload))
			for _, n := range tc.during {
				want += n * tc.rounds
			}
			parts := plan(t, cfg, nil, Earliest, false)

			name := uniqueName(t)
			p, s := beam.NewPipelineWithRoot()
			batches := read(s, cfg, deal(parts, tc.readers))
			counts := beam.ParDo(s, &countFn{Name: name + "/read"}, batches)
			windowed := beam.WindowInto(s, window.NewFixedWindows(200*time.Millisecond), counts)
			perWindow := beam.ParDo(s, sumGroup, beam.GroupByKey(s, windowed))
			global := beam.WindowInto(s, window.NewGlobalWindows(), perWindow)
			passert.Equals(s, stats.Sum(s, global), want)
			passert.Empty(s, tiling(s, parts, batches))

			// Produce while the pipeline reads.
			produced := make(chan error, 1)
			go func() {
				for r := 0; r < tc.rounds; r++ {
					time.Sleep(50 * time.Millisecond)
					if err := produceAll(context.Background(), cl, records(fmt.Sprintf("r%d", r), tc.during)); err != nil {
						produced <- err
						return
					}
				}
				produced <- nil
			}()
			read := counter(name + "/read")
			err := runUntilStop(t, p, 90*time.Second, func() bool { return read.Load() >= int64(want) })
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if err := <-produced; err != nil {
				t.Fatalf("produce: %v", err)
			}
			if got := read.Load(); got != int64(want) {
				t.Errorf("read %d records, want %d", got, want)
			}
		})
	}
}

// TestReadTransactionalGaps reads a log where transactions were committed
// and aborted: control records and aborted records leave offsets with no
// record. A bounded read must return exactly the records a consumer of its
// isolation level sees, its batches must tile each partition's offsets with
// no hole, and the read must end.
func TestReadTransactionalGaps(t *testing.T) {
	cfg := startKafka(t, 3)
	txn := client(t, cfg, kgo.TransactionalID("haade-test"))
	plain := client(t, cfg)
	ctx := context.Background()
	var committed, aborted []string
	for i := 0; i < 12; i++ {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		tag := fmt.Sprintf("txn%d", i)
		// Partition i%3 gets no record in this transaction.
		counts := map[int32]int{int32((i + 1) % 3): 1 + i%4, int32((i + 2) % 3): 3}
		recs := records(tag, counts)
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		commit := i%3 != 1 && i != 11 // the last transaction aborts: the log ends with an abort marker
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			v := fmt.Sprintf("%d:%s", r.Partition, r.Value)
			if commit {
				committed = append(committed, v)
			} else {
				aborted = append(aborted, v)
			}
		}
		if i%4 == 0 { // plain records between transactions
			committed = append(committed, produce(t, plain, fmt.Sprintf("plain%d", i), map[int32]int{0: 2, 1: 1})...)
		}
	}
	ends := endOffsets(t, cfg)
	var span int64
	for _, e := range ends {
		span += e
	}
	if span <= int64(len(committed)+len(aborted)) {
		t.Fatalf("the log spans %d offsets for %d records: no gaps to test", span, len(committed)+len(aborted))
	}

	tests := []struct {
		name            string
		readUncommitted bool
		want            []string
	}{
		{"read committed", false, committed},
		{"read uncommitted", true, append(append([]string{}, committed...), aborted...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			cfg.ReadUncommitted = tc.readUncommitted
			parts := plan(t, cfg, nil, Earliest, true)
			for _, p := range parts {
				if p.Start != 0 || p.End != ends[p.ID] {
					t.Fatalf("Plan: partition %d = [%d,%d), want [0,%d)", p.ID, p.Start, p.End, ends[p.ID])
				}
			}
			p, s := beam.NewPipelineWithRoot()
			batches := read(s, cfg, deal(parts, DefaultReaders))
			passert.EqualsList(s, beam.ParDo(s, recordValues, batches), tc.want)
			passert.Empty(s, tiling(s, parts, batches))
			if err := runWithin(t, p, 60*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadBoundedEnds checks that a bounded read ends at the end offsets
// taken by Plan: partitions with no record end at once, and records
// produced after Plan are not read.
func TestReadBoundedEnds(t *testing.T) {
	cfg := startKafka(t, 4)
	cl := client(t, cfg)
	want := produce(t, cl, "before", map[int32]int{0: 20, 2: 5})
	parts := plan(t, cfg, nil, Earliest, true)
	wantParts := []Partition{{ID: 0, Start: 0, End: 20}, {ID: 1, Start: 0, End: 0}, {ID: 2, Start: 0, End: 5}, {ID: 3, Start: 0, End: 0}}
	if diff := cmp.Diff(wantParts, parts); diff != "" {
		t.Fatalf("Plan (-want +got):\n%s", diff)
	}
	produce(t, cl, "after", map[int32]int{0: 7, 1: 3, 2: 4, 3: 1})

	p, s := beam.NewPipelineWithRoot()
	batches := read(s, cfg, deal(parts, DefaultReaders))
	passert.EqualsList(s, beam.ParDo(s, recordValues, batches), want)
	passert.Empty(s, tiling(s, parts, batches))
	if err := runWithin(t, p, 60*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("only empty partitions", func(t *testing.T) {
		parts := []Partition{{ID: 1, Start: 3, End: 3}, {ID: 3, Start: 1, End: 1}}
		p, s := beam.NewPipelineWithRoot()
		batches := read(s, cfg, deal(parts, DefaultReaders))
		passert.Empty(s, batches)
		if err := runWithin(t, p, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	})
}

// TestReadOffsetOutOfRange deletes records that the read has not reached:
// the read must fail with ErrOffsetOutOfRange, never skip them silently.
func TestReadOffsetOutOfRange(t *testing.T) {
	cfg := startKafka(t, 1)
	cl := client(t, cfg)
	produce(t, cl, "v", map[int32]int{0: 10})
	parts := plan(t, cfg, nil, Earliest, true)
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 5})
	if _, err := kadm.NewClient(cl).DeleteRecords(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	read(s, cfg, deal(parts, DefaultReaders))
	err := runWithin(t, p, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), ErrOffsetOutOfRange.Error()) {
		t.Fatalf("run = %v, want %v", err, ErrOffsetOutOfRange)
	}
}

// TestStop runs an unbounded read while records keep arriving, stops
// cleanly once some are read, and expects the pipeline to drain and return without
// error, with every record it read counted by its windows.
func TestStop(t *testing.T) {
	cfg := startKafka(t, 4)
	cl := client(t, cfg)
	produce(t, cl, "pre", map[int32]int{0: 100, 1: 100, 2: 100, 3: 100})
	parts := plan(t, cfg, nil, Earliest, false)

	name := uniqueName(t)
	p, s := beam.NewPipelineWithRoot()
	batches := read(s, cfg, deal(parts, DefaultReaders))
	counts := beam.ParDo(s, &countFn{Name: name + "/read"}, batches)
	windowed := beam.WindowInto(s, window.NewFixedWindows(200*time.Millisecond), counts)
	perWindow := beam.ParDo(s, sumGroup, beam.GroupByKey(s, windowed))
	global := beam.WindowInto(s, window.NewGlobalWindows(), perWindow)
	beam.ParDo0(s, &addFn{Name: name + "/windowed"}, stats.Sum(s, global))
	passert.Empty(s, tiling(s, parts, batches))

	stop := make(chan struct{})
	produced := make(chan error, 1)
	go func() {
		for r := 0; ; r++ {
			select {
			case <-stop:
				produced <- nil
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := produceAll(context.Background(), cl, records(fmt.Sprintf("r%d", r), map[int32]int{int32(r % 4): 10})); err != nil {
				produced <- err
				return
			}
		}
	}()
	read := counter(name + "/read")
	started := time.Now()
	err := runUntilStop(t, p, 60*time.Second, func() bool { return read.Load() >= 600 })
	close(stop)
	if err != nil {
		t.Fatalf("run after the stop: %v", err)
	}
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if got, want := counter(name+"/windowed").Load(), read.Load(); got != want {
		t.Errorf("the windows counted %d records, the read emitted %d", got, want)
	}
	t.Logf("read %d records in %v", read.Load(), time.Since(started).Round(time.Millisecond))
}

// TestTilingCheck makes sure the tiling check that the pipeline tests rely
// on does catch holes, overlaps, stray records and a wrong end.
func TestTilingCheck(t *testing.T) {
	rec := func(offs ...int64) []offsets.Record {
		var rs []offsets.Record
		for _, o := range offs {
			rs = append(rs, offsets.Record{Offset: o})
		}
		return rs
	}
	b := func(start, end int64, offs ...int64) offsets.Batch {
		return offsets.Batch{Topic: topic, Partition: 0, Start: start, End: end, Records: rec(offs...)}
	}
	tests := []struct {
		name    string
		end     int64
		batches []offsets.Batch
		bad     int
	}{
		{"tiles", 10, []offsets.Batch{b(4, 10, 5, 9), b(0, 4, 0, 1)}, 0},
		{"tiles, unbounded", unbounded, []offsets.Batch{b(0, 4, 0, 1)}, 0},
		{"hole", 10, []offsets.Batch{b(0, 4), b(5, 10)}, 1},
		{"overlap", 10, []offsets.Batch{b(0, 5), b(4, 10)}, 1},
		{"record outside its batch", 10, []offsets.Batch{b(0, 10, 10)}, 1},
		{"records out of order", 10, []offsets.Batch{b(0, 10, 5, 3)}, 1},
		{"short of the end", 10, []offsets.Batch{b(0, 9)}, 1},
		{"empty batch", 10, []offsets.Batch{b(0, 10), b(10, 10)}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &tilingFn{Parts: []Partition{{ID: 0, Start: 0, End: tc.end}}}
			i := 0
			var msgs []string
			f.ProcessElement(0, func(out *offsets.Batch) bool {
				if i == len(tc.batches) {
					return false
				}
				*out = tc.batches[i]
				i++
				return true
			}, func(m string) { msgs = append(msgs, m) })
			if len(msgs) != tc.bad {
				t.Errorf("violations %q, want %d", msgs, tc.bad)
			}
		})
	}
}
