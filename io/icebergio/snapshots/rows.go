package snapshots

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func init() {
	register.DoFn2x1[SnapshotRows, func(beam.X), error](&rowsFn{})
	register.DoFn2x1[SnapshotRows, func(int64), error](&touchedDaysFn{})
	register.DoFn3x1[context.Context, int64, func(beam.X), error](&dayRowsFn{})
	register.Emitter1[beam.X]()
}

// Rows turns PCollection<SnapshotRows> (from ReadSnapshots) into
// PCollection<T>, one element per row, where row is a zero value of the row
// struct T (see SchemaOf): the form that Beam's own transforms, such as
// stats.Count and top.Largest, take. Columns are matched by name.
func Rows(s beam.Scope, snapshots beam.PCollection, row any) beam.PCollection {
	s = s.Scope("snapshots.Rows")
	t := structType(row)
	return beam.ParDo(s, &rowsFn{Type: beam.EncodedType{T: t}}, snapshots, beam.TypeDefinition{Var: beam.XType, T: t})
}

type rowsFn struct{ Type beam.EncodedType }

func (f *rowsFn) ProcessElement(sr SnapshotRows, emit func(beam.X)) error {
	out := reflect.New(reflect.SliceOf(f.Type.T))
	if err := sr.Decode(out.Interface()); err != nil {
		return err
	}
	for i, v := 0, out.Elem(); i < v.Len(); i++ {
		emit(v.Index(i).Interface())
	}
	return nil
}

// TouchedDays returns PCollection<int64>: the distinct days (days since the
// epoch, UTC) of the timestamp column of the rows in PCollection<SnapshotRows>,
// decoded as rows of row's type. A pipeline that recomputes whole days
// (see icebergio.OverwriteDays) reads those days again with ReadDays.
func TouchedDays(s beam.Scope, snapshots beam.PCollection, row any, column string) beam.PCollection {
	s = s.Scope("snapshots.TouchedDays")
	t := structType(row)
	timestampField(t, column) // fails at construction, not on a worker
	return filter.Distinct(s, beam.ParDo(s, &touchedDaysFn{Type: beam.EncodedType{T: t}, Column: column}, snapshots))
}

type touchedDaysFn struct {
	Type   beam.EncodedType
	Column string
}

func (f *touchedDaysFn) ProcessElement(sr SnapshotRows, emit func(int64)) error {
	out := reflect.New(reflect.SliceOf(f.Type.T))
	if err := sr.Decode(out.Interface()); err != nil {
		return err
	}
	idx := timestampField(f.Type.T, f.Column)
	seen := map[int64]bool{}
	for i, v := 0, out.Elem(); i < v.Len(); i++ {
		if d := rows.Day(v.Index(i).FieldByIndex(idx).Int()); !seen[d] {
			seen[d] = true
			emit(d)
		}
	}
	return nil
}

// ReadDays reads, for each day of PCollection<int64> (days since the
// epoch), every row of table ident whose timestamp column falls in that UTC
// day, and returns them as PCollection<T> where row is a zero value of T.
// A table partitioned by day(column) reads one partition per day.
func ReadDays(s beam.Scope, cat icebergio.CatalogConfig, ident string, row any, column string, days beam.PCollection) beam.PCollection {
	s = s.Scope("snapshots.ReadDays")
	t := structType(row)
	timestampField(t, column)
	return beam.ParDo(s, &dayRowsFn{Catalog: cat, Ident: ident, Column: column, Type: beam.EncodedType{T: t}},
		days, beam.TypeDefinition{Var: beam.XType, T: t})
}

type dayRowsFn struct {
	Catalog icebergio.CatalogConfig
	Ident   string
	Column  string
	Type    beam.EncodedType
}

func (f *dayRowsFn) ProcessElement(ctx context.Context, day int64, emit func(beam.X)) error {
	out := reflect.New(reflect.SliceOf(f.Type.T))
	flt := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference(f.Column), iceberg.Timestamp(day*rows.DayMicros)),
		iceberg.LessThan(iceberg.Reference(f.Column), iceberg.Timestamp((day+1)*rows.DayMicros)))
	if err := icebergio.ScanRows(ctx, f.Catalog, f.Ident, out.Interface(), table.WithRowFilter(flt)); err != nil {
		return fmt.Errorf("snapshots.ReadDays: day %d of %s: %w", day, f.Ident, err)
	}
	for i, v := 0, out.Elem(); i < v.Len(); i++ {
		emit(v.Index(i).Interface())
	}
	return nil
}

// structType returns the struct type of row, a struct or a pointer to one.
// It panics otherwise: a pipeline built with a wrong row fails at
// construction.
func structType(row any) reflect.Type {
	t := reflect.TypeOf(row)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, err := rows.TypeOf(t); err != nil {
		panic(fmt.Sprintf("icebergio: row %T: %v", row, err))
	}
	return t
}

// timestampField returns the index of the required int64 field of t
// tagged as column. It panics when there is none.
func timestampField(t reflect.Type, column string) []int {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("iceberg"), ",")
		if name == column && f.Type.Kind() == reflect.Int64 {
			return f.Index
		}
	}
	panic(fmt.Sprintf("icebergio: %v has no required timestamp column %q", t, column))
}
