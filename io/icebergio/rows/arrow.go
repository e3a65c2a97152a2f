package rows

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ArrowSchema returns the Arrow schema that Write builds a table's rows in,
// for a table of schema sc: the one table.WriteRecords is then given.
func ArrowSchema(sc *iceberg.Schema) (*arrow.Schema, error) {
	return table.SchemaToArrowSchema(sc, nil, true, false)
}

// RowBuilder turns slices of a row type (see SchemaOf) into Arrow record
// batches, with the same appender that Write uses inside its writers. It is
// for code that writes Parquet without Beam, such as benchmarks and tools.
// A RowBuilder is not safe for concurrent use.
type RowBuilder struct {
	goType reflect.Type
	b      *array.RecordBuilder
	app    *Appender
	rows   int
}

// NewRowBuilder returns a builder of rows of row's type (a struct or a
// pointer to one) into record batches of ArrowSchema(sc). It fails when
// rows of that type cannot be written into a table of schema sc. mem nil
// means memory.DefaultAllocator. Release it when done.
func NewRowBuilder(mem memory.Allocator, sc *iceberg.Schema, row any) (*RowBuilder, error) {
	t := reflect.TypeOf(row)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return nil, fmt.Errorf("%w: nil row", ErrRowType)
	}
	rt, err := TypeOf(t)
	if err != nil {
		return nil, err
	}
	if err := rt.CheckCompatible(sc); err != nil {
		return nil, err
	}
	as, err := ArrowSchema(sc)
	if err != nil {
		return nil, err
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, as)
	return &RowBuilder{goType: t, b: b, app: NewAppender(rt, b)}, nil
}

// Schema returns the Arrow schema of the batches.
func (r *RowBuilder) Schema() *arrow.Schema { return r.b.Schema() }

// Append appends every row of rows, which must be a slice of the row type
// (e.g. []tables.BronzeEvent).
func (r *RowBuilder) Append(rows any) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice || v.Type().Elem() != r.goType {
		return fmt.Errorf("%w: Append wants []%v, got %T", ErrRowType, r.goType, rows)
	}
	n := v.Len()
	r.app.AppendSlice(v, 0, n)
	r.rows += n
	return nil
}

// Len returns the number of rows appended since the last NewRecordBatch.
func (r *RowBuilder) Len() int { return r.rows }

// NewRecordBatch returns the rows appended so far as one record batch and
// empties the builder for reuse. The caller owns the batch: release it, or
// hand it to table.WriteRecords, which releases what it consumes.
func (r *RowBuilder) NewRecordBatch() arrow.RecordBatch {
	r.rows = 0
	return r.b.NewRecordBatch()
}

// Release releases the builder's buffers.
func (r *RowBuilder) Release() { r.b.Release() }
