package icebergio

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/offsets"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*overwriteFn)(nil)).Elem())
}

// OverwriteDays replaces, in one snapshot, the days of the sink's table
// that rows touch: every row of those days is deleted and rows are
// written instead, so running it again with the same input changes
// nothing. rows is a PCollection of a row type (see rows.SchemaOf); column names
// the row's day: an int32 date or an int64 timestamp column. The summary
// records progress as the next source offsets, so a rerun reads only what
// is new. It returns PCollection<Commit> with at most one element.
//
// All rows go to one worker: it is for small, aggregated tables (gold).
// rows must be bounded (a bounded ReadSnapshots, a bounded Kafka read):
// an unbounded input panics at construction with ErrUnbounded.
func OverwriteDays(s beam.Scope, sink *Sink, dayColumn string, progress offsets.Offsets, rows beam.PCollection) beam.PCollection {
	s = s.Scope("icebergio.OverwriteDays")
	sink.Catalog.exportPassword() // the DoFns carry none
	if isUnbounded(rows) {
		panic(fmt.Errorf("%w: icebergio.OverwriteDays %s replaces whole days in one commit and needs a bounded input (read with Source.Bounded)", ErrUnbounded, sink.Table.Ident))
	}
	rt, err := rowType(sink.Table)
	if err != nil {
		panic(err)
	}
	if rows.Type().Type() != rt.GoType() {
		panic(fmt.Sprintf("icebergio.OverwriteDays %s: rows are %v, the table's are %v", sink.Table.Ident, rows.Type().Type(), rt.GoType()))
	}
	if _, _, ok := rt.DayColumn(dayColumn); !ok {
		panic(fmt.Sprintf("icebergio.OverwriteDays %s: %q is not a required date or timestamp column", sink.Table.Ident, dayColumn))
	}
	grouped := beam.GroupByKey(s, beam.AddFixedKey(s, rows))
	return beam.ParDo(s, &overwriteFn{Catalog: sink.Catalog, Ident: sink.Table.Ident, Pipeline: sink.Pipeline,
		Column: dayColumn, Progress: progress}, grouped)
}

type overwriteFn struct {
	Catalog  CatalogConfig
	Ident    string
	Pipeline string
	Column   string
	Progress offsets.Offsets
}

func (f *overwriteFn) ProcessElement(ctx context.Context, _ int, values func(*beam.X) bool, emit func(Commit)) error {
	var v beam.X
	var all reflect.Value
	for values(&v) {
		if !all.IsValid() {
			all = reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(v)), 0, 1024)
		}
		all = reflect.Append(all, reflect.ValueOf(v))
	}
	if !all.IsValid() || all.Len() == 0 {
		return nil
	}
	rt, err := rows.TypeOf(all.Type().Elem())
	if err != nil {
		return err
	}
	idx, date, _ := rt.DayColumn(f.Column)
	// The days the rows touch, and the filter that selects them.
	days := map[int64]bool{}
	for i := 0; i < all.Len(); i++ {
		fv := all.Index(i).FieldByIndex(idx)
		if date {
			days[fv.Int()] = true
		} else {
			days[rows.Day(fv.Int())] = true
		}
	}
	var sorted []int64
	for d := range days {
		sorted = append(sorted, d)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var filter iceberg.BooleanExpression
	for _, d := range sorted {
		var e iceberg.BooleanExpression
		if date {
			e = iceberg.EqualTo(iceberg.Reference(f.Column), iceberg.Date(d))
		} else {
			e = iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference(f.Column), iceberg.Timestamp(d*rows.DayMicros)),
				iceberg.LessThan(iceberg.Reference(f.Column), iceberg.Timestamp((d+1)*rows.DayMicros)))
		}
		if filter == nil {
			filter = e
		} else {
			filter = iceberg.NewOr(filter, e)
		}
	}
	progress := f.Progress
	if progress == nil {
		progress = offsets.Offsets{} // "{}" in the summary, as before
	}
	cat, err := f.Catalog.OpenExisting(ctx)
	if err != nil {
		return err
	}
	defer CloseCatalog(cat)
	started := time.Now()
	var id int64
	err = Retry(ctx, defaultBackoff, "overwrite", f.Ident, func() error {
		tbl, err := LoadTable(ctx, cat, f.Ident)
		if err != nil {
			return err
		}
		as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
		if err != nil {
			return Permanent(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		defer b.Release()
		rows.NewAppender(rt, b).AppendSlice(all, 0, all.Len())
		rec := b.NewRecordBatch()
		defer rec.Release()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			return Permanent(err)
		}
		defer rdr.Release()
		props := iceberg.Properties{SummaryPipeline: f.Pipeline, SummaryOffsets: progress.Encode(),
			SummaryWindowEnd: started.UTC().Format(time.RFC3339Nano)}
		tx, err := pinned(tbl)
		if err != nil {
			return err
		}
		if err := tx.Overwrite(ctx, rdr, props, table.WithOverwriteFilter(filter)); err != nil {
			return err
		}
		nt, err := tx.Commit(ctx)
		if err != nil {
			return err
		}
		id = nt.CurrentSnapshot().SnapshotID
		return nil
	})
	if err != nil {
		return err
	}
	now := time.Now()
	commitDuration.WithLabelValues(f.Ident).Observe(now.Sub(started).Seconds())
	commitSucceeded(f.Ident, now)
	commits.WithLabelValues(f.Ident, "committed").Inc()
	emit(Commit{Table: f.Ident, SnapshotID: id, Rows: int64(all.Len()), Outcome: "committed", Offsets: progress.String()})
	return nil
}
