package silver

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/transforms/parse"
)

func init() {
	register.DoFn3x1[snapshots.SnapshotRows, func(Batch), func(RejectBatch), error](&fromBronzeFn{})
	register.Emitter1[Batch]()
	register.Emitter1[RejectBatch]()
	register.DoFn3x1[context.Context, Batch, func(Batch), error](&dedupFn{})
}

// FromBronze decodes PCollection<snapshots.SnapshotRows> of bronze rows and
// normalises them: it returns PCollection<Batch> and PCollection<RejectBatch>,
// one of each per bronze snapshot, each carrying the snapshot's range.
// Rows keep bronze order: ingestion time, then Kafka partition and offset.
func FromBronze(s beam.Scope, snapshots beam.PCollection) (events, rejects beam.PCollection) {
	s = s.Scope("silver.FromBronze")
	return beam.ParDo2(s, &fromBronzeFn{}, snapshots)
}

type fromBronzeFn struct{}

func (fromBronzeFn) ProcessElement(sr snapshots.SnapshotRows, good func(Batch), bad func(RejectBatch)) error {
	var rows []parse.Event
	if err := sr.Decode(&rows); err != nil {
		return fmt.Errorf("silver: decode bronze snapshot %d: %w", sr.SnapshotID, err)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.IngestedAt != b.IngestedAt {
			return a.IngestedAt < b.IngestedAt
		}
		if a.KafkaPartition != b.KafkaPartition {
			return a.KafkaPartition < b.KafkaPartition
		}
		return a.KafkaOffset < b.KafkaOffset
	})
	eb := Batch{Source: sr.Range, Rows: make([]Event, 0, len(rows))}
	rb := RejectBatch{Source: sr.Range}
	for _, r := range rows {
		ev, reason := Normalize(r, sr.SnapshotID)
		if reason != "" {
			rb.Rows = append(rb.Rows, Reject{Source: r.Source, Title: r.Title, Timestamp: r.Timestamp, IngestedAt: r.IngestedAt,
				KafkaPartition: r.KafkaPartition, KafkaOffset: r.KafkaOffset, BronzeSnapshotID: sr.SnapshotID, Reason: reason})
			continue
		}
		eb.Rows = append(eb.Rows, ev)
	}
	good(eb)
	bad(rb)
	return nil
}

// DedupOptions configure Dedup.
type DedupOptions struct {
	// Horizon: a row is a duplicate of an earlier row with the same source,
	// title and event timestamp ingested at most this long before it.
	// Default 24h.
	Horizon time.Duration
	// Catalog and Table name the silver table, whose rows count as earlier.
	Catalog icebergio.CatalogConfig
	Table   string
}

// Dedup drops rows of PCollection<Batch> whose source, title and event
// timestamp match an earlier row within the horizon: a row already in the
// silver table, or an earlier row of this run. The earliest row in bronze
// order is kept, so which row survives does not depend on the runner. It
// returns PCollection<Batch> with the same ranges.
//
// Batches must reach it in bronze order, which holds when it is fused
// after ReadSnapshots (a single element reading snapshots in sequence).
func Dedup(s beam.Scope, batches beam.PCollection, opts DedupOptions) beam.PCollection {
	s = s.Scope("silver.Dedup")
	if opts.Horizon <= 0 {
		opts.Horizon = 24 * time.Hour
	}
	return beam.ParDo(s, &dedupFn{Catalog: opts.Catalog, Table: opts.Table, Horizon: opts.Horizon}, batches)
}

type key struct {
	source, title string
	ts            int64
}

type dedupFn struct {
	Catalog icebergio.CatalogConfig
	Table   string
	Horizon time.Duration

	seen    map[key]int64  // ingested_at of the kept row
	days    map[int64]bool // event days whose silver rows are loaded into seen
	dropped beam.Counter
	// newest is the latest ingested_at seen; swept is newest at the last
	// eviction from seen.
	newest, swept int64
}

// evictSlack is how far before the newest ingested_at a later row may be
// stamped (bronze stamps are per record, and partitions interleave).
const evictSlack = int64(time.Hour / time.Microsecond)

func (f *dedupFn) Setup() {
	f.seen, f.days = map[key]int64{}, map[int64]bool{}
	f.dropped = beam.NewCounter("haade", "silver_duplicates")
}

const dayMicros = int64(24 * time.Hour / time.Microsecond)

func (f *dedupFn) ProcessElement(ctx context.Context, b Batch, emit func(Batch)) error {
	out := Batch{Source: b.Source, Rows: b.Rows[:0:0]}
	for _, r := range b.Rows {
		day := r.Timestamp / dayMicros
		if !f.days[day] {
			if err := f.loadDay(ctx, day); err != nil {
				return err
			}
		}
		k := key{r.Source, r.Title, r.Timestamp}
		if prev, ok := f.seen[k]; ok && r.IngestedAt-prev <= f.Horizon.Microseconds() {
			f.dropped.Inc(ctx, 1)
			continue
		}
		f.seen[k] = r.IngestedAt
		f.newest = max(f.newest, r.IngestedAt)
		out.Rows = append(out.Rows, r)
	}
	f.evict()
	emit(out)
	return nil
}

// evict forgets the keys that no later row can duplicate: those kept more
// than the horizon (and evictSlack) before the newest row, since rows come
// in bronze order. It sweeps once the newest row has moved a quarter of
// the horizon, so a streaming silver holds about 1.25 horizons of keys
// instead of every key since it started. The days stay loaded: a key of a
// loaded day that was evicted is older than the horizon for any later row.
func (f *dedupFn) evict() {
	h := f.Horizon.Microseconds()
	if f.newest-f.swept < h/4 {
		return
	}
	f.swept = f.newest
	oldest := f.newest - h - evictSlack
	for k, at := range f.seen {
		if at < oldest {
			delete(f.seen, k)
		}
	}
}

// loadDay reads the keys of the silver rows of one event day: the table is
// partitioned by day(timestamp), so this reads one partition.
func (f *dedupFn) loadDay(ctx context.Context, day int64) error {
	var rows []Event
	filter := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("timestamp"), iceberg.Timestamp(day*dayMicros)),
		iceberg.LessThan(iceberg.Reference("timestamp"), iceberg.Timestamp((day+1)*dayMicros)))
	if err := icebergio.ScanRows(ctx, f.Catalog, f.Table, &rows, table.WithRowFilter(filter)); err != nil {
		return fmt.Errorf("silver: read %s for deduplication: %w", f.Table, err)
	}
	for _, r := range rows {
		k := key{r.Source, r.Title, r.Timestamp}
		if prev, ok := f.seen[k]; !ok || r.IngestedAt < prev {
			f.seen[k] = r.IngestedAt
		}
	}
	f.days[day] = true
	return nil
}
