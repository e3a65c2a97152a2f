package main

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/silver"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn3x1[context.Context, silver.Batch, func(silver.Batch), error](&dedupFn{})
	register.Emitter1[silver.Batch]()
}

// dedup drops the rows of PCollection<silver.Batch> that duplicate an
// earlier row within horizon (silver.Deduper): a row already in the silver
// table ident, or an earlier row of this run. It returns
// PCollection<silver.Batch> with the same ranges. The table's rows of an
// event day are read once, before the first row of that day: the table is
// partitioned by day(timestamp), so that reads one partition.
//
// Batches must reach it in bronze order, which holds when it is fused
// after ReadSnapshots (a single element reading snapshots in sequence).
func dedup(s beam.Scope, batches beam.PCollection, cat icebergio.CatalogConfig, ident string, horizon time.Duration) beam.PCollection {
	s = s.Scope("silver.Dedup")
	return beam.ParDo(s, &dedupFn{Catalog: cat, Table: ident, Horizon: horizon}, batches)
}

type dedupFn struct {
	Catalog icebergio.CatalogConfig
	Table   string
	Horizon time.Duration

	d       *silver.Deduper
	dropped beam.Counter
}

func (f *dedupFn) Setup() {
	f.d = silver.NewDeduper(f.Horizon)
	f.dropped = beam.NewCounter("haade", "silver_duplicates")
}

func (f *dedupFn) ProcessElement(ctx context.Context, b silver.Batch, emit func(silver.Batch)) error {
	out := silver.Batch{Source: b.Source, Rows: b.Rows[:0:0]}
	for _, r := range b.Rows {
		if day := r.Timestamp / silver.DayMicros; !f.d.Seeded(day) {
			if err := f.loadDay(ctx, day); err != nil {
				return err
			}
		}
		if !f.d.Keep(r) {
			f.dropped.Inc(ctx, 1)
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	f.d.Evict()
	emit(out)
	return nil
}

// loadDay seeds the deduper with the silver rows of one event day.
func (f *dedupFn) loadDay(ctx context.Context, day int64) error {
	var rows []tables.SilverEvent
	filter := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("timestamp"), iceberg.Timestamp(day*silver.DayMicros)),
		iceberg.LessThan(iceberg.Reference("timestamp"), iceberg.Timestamp((day+1)*silver.DayMicros)))
	if err := icebergio.ScanRows(ctx, f.Catalog, f.Table, &rows, table.WithRowFilter(filter)); err != nil {
		return fmt.Errorf("silver: read %s for deduplication: %w", f.Table, err)
	}
	f.d.Seed(day, rows)
	return nil
}
