package snapshots

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/offsets"
)

func init() {
	register.DoFn2x1[SnapshotRows, func(beam.X), error](&snapshotBatchFn{})
	register.DoFn3x1[context.Context, int64, func(beam.X), error](&dayBatchFn{})
	register.DoFn3x1[context.Context, SnapshotRows, func(SnapshotRows), error](&followFn{})
	register.Emitter1[SnapshotRows]()
}

// The read primitives below hand the transforms plain Go values, so that
// transforms never import io: a batch type is a struct, declared where the
// rows are (transforms/tables, a transforms package), with a field
// Rows []R of a row struct R (see SchemaOf) and any of
//
//	Range      Range  // the snapshot's range (SnapshotBatches)
//	SnapshotID int64  // the snapshot's id (SnapshotBatches)
//	Day        int64  // days since the epoch, UTC (ReadDayBatches)
//
// A batch type without Rows, or with one of these fields of another type,
// fails at construction.

// batchShape is where the fields of a batch type are.
type batchShape struct {
	t                  reflect.Type
	row                reflect.Type
	rows               int
	rng, snapshot, day int // -1: absent
}

func batchShapeOf(batch any) batchShape {
	t := reflect.TypeOf(batch)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("icebergio: batch %T is not a struct", batch))
	}
	sh := batchShape{t: t, rows: -1, rng: -1, snapshot: -1, day: -1}
	want := func(f reflect.StructField, typ reflect.Type) int {
		if f.Type != typ {
			panic(fmt.Sprintf("icebergio: batch %v: field %s is %v, want %v", t, f.Name, f.Type, typ))
		}
		return f.Index[0]
	}
	for i := 0; i < t.NumField(); i++ {
		switch f := t.Field(i); f.Name {
		case "Rows":
			if f.Type.Kind() != reflect.Slice {
				panic(fmt.Sprintf("icebergio: batch %v: Rows is %v, want a slice of a row struct", t, f.Type))
			}
			sh.rows, sh.row = i, f.Type.Elem()
		case "Range":
			sh.rng = want(f, reflect.TypeOf(offsets.Range{}))
		case "SnapshotID":
			sh.snapshot = want(f, reflect.TypeOf(int64(0)))
		case "Day":
			sh.day = want(f, reflect.TypeOf(int64(0)))
		}
	}
	if sh.rows < 0 {
		panic(fmt.Sprintf("icebergio: batch %v has no field Rows", t))
	}
	if _, err := rows.TypeOf(sh.row); err != nil {
		panic(fmt.Sprintf("icebergio: batch %v: %v", t, err))
	}
	return sh
}

// SnapshotBatches turns PCollection<SnapshotRows> (from ReadSnapshots)
// into PCollection<B>, one batch per snapshot, where batch is a zero value
// of the batch type B (see above): the rows decoded, with the snapshot's
// Range and SnapshotID. Promoted columns that R lacks fold into its
// overflow, as in SnapshotRows.Decode. Use Rows instead for one element
// per row.
func SnapshotBatches(s beam.Scope, snapshots beam.PCollection, batch any) beam.PCollection {
	s = s.Scope("icebergio.SnapshotBatches")
	sh := batchShapeOf(batch)
	return beam.ParDo(s, &snapshotBatchFn{Type: beam.EncodedType{T: sh.t}}, snapshots, beam.TypeDefinition{Var: beam.XType, T: sh.t})
}

type snapshotBatchFn struct {
	Type beam.EncodedType

	shape *batchShape
}

func (f *snapshotBatchFn) ProcessElement(sr SnapshotRows, emit func(beam.X)) error {
	if f.shape == nil {
		sh := batchShapeOf(reflect.Zero(f.Type.T).Interface())
		f.shape = &sh
	}
	b := reflect.New(f.shape.t).Elem()
	if err := sr.Decode(b.Field(f.shape.rows).Addr().Interface()); err != nil {
		return fmt.Errorf("icebergio.SnapshotBatches: snapshot %d: %w", sr.SnapshotID, err)
	}
	if f.shape.rng >= 0 {
		b.Field(f.shape.rng).Set(reflect.ValueOf(sr.Range))
	}
	if f.shape.snapshot >= 0 {
		b.Field(f.shape.snapshot).SetInt(sr.SnapshotID)
	}
	emit(b.Interface())
	return nil
}

// ReadDayBatches reads, for each day of PCollection<int64> (days since the
// epoch), every row of table ident whose timestamp column falls in that UTC
// day, and returns PCollection<B>, one batch per day, where batch is a zero
// value of the batch type B (see above) with Day set. A table partitioned
// by day(column) reads one partition per day. Use ReadDays instead for one
// element per row.
func ReadDayBatches(s beam.Scope, cat icebergio.CatalogConfig, ident string, batch any, column string, days beam.PCollection) beam.PCollection {
	s = s.Scope("icebergio.ReadDayBatches")
	sh := batchShapeOf(batch)
	timestampField(sh.row, column) // fails at construction, not on a worker
	return beam.ParDo(s, &dayBatchFn{Catalog: cat, Ident: ident, Column: column, Type: beam.EncodedType{T: sh.t}},
		days, beam.TypeDefinition{Var: beam.XType, T: sh.t})
}

type dayBatchFn struct {
	Catalog icebergio.CatalogConfig
	Ident   string
	Column  string
	Type    beam.EncodedType

	shape *batchShape
}

func (f *dayBatchFn) ProcessElement(ctx context.Context, day int64, emit func(beam.X)) error {
	if f.shape == nil {
		sh := batchShapeOf(reflect.Zero(f.Type.T).Interface())
		f.shape = &sh
	}
	b := reflect.New(f.shape.t).Elem()
	flt := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference(f.Column), iceberg.Timestamp(day*rows.DayMicros)),
		iceberg.LessThan(iceberg.Reference(f.Column), iceberg.Timestamp((day+1)*rows.DayMicros)))
	if err := icebergio.ScanRows(ctx, f.Catalog, f.Ident, b.Field(f.shape.rows).Addr().Interface(), table.WithRowFilter(flt)); err != nil {
		return fmt.Errorf("icebergio.ReadDayBatches: day %d of %s: %w", day, f.Ident, err)
	}
	if f.shape.day >= 0 {
		b.Field(f.shape.day).SetInt(day)
	}
	emit(b.Interface())
	return nil
}

// FollowOptions configure Follow.
type FollowOptions struct {
	Catalog icebergio.CatalogConfig
	// Source is the table read; Target the table written from it.
	Source, Target string
}

// Follow passes PCollection<SnapshotRows> of table Source through, and
// before the first snapshot whose promoted columns (SnapshotRows.Members)
// differ from the last ones seen, applies them to Target with
// FollowPromotions, so that a promoted bronze member becomes a silver
// column before any row carrying it is written.
func Follow(s beam.Scope, snapshots beam.PCollection, opts FollowOptions) beam.PCollection {
	s = s.Scope("icebergio.Follow")
	return beam.ParDo(s, &followFn{Catalog: opts.Catalog, Source: opts.Source, Target: opts.Target}, snapshots)
}

type followFn struct {
	Catalog        icebergio.CatalogConfig
	Source, Target string

	seen string // the Members last followed
}

func (f *followFn) ProcessElement(ctx context.Context, sr SnapshotRows, emit func(SnapshotRows)) error {
	if sr.Members != "" && sr.Members != f.seen {
		rep, err := FollowPromotions(ctx, f.Catalog, f.Source, f.Target)
		if err != nil {
			return fmt.Errorf("icebergio.Follow: the promoted columns of %s: %w", f.Source, err)
		}
		for _, a := range rep.Applied {
			slog.Info("following promoted columns", "source", f.Source, "table", f.Target, "change", a)
		}
		f.seen = sr.Members
	}
	emit(sr)
	return nil
}
