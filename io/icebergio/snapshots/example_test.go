package snapshots_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// TestMain runs the example's pipelines on Prism (ptest's default), in
// process.
func TestMain(m *testing.M) { ptest.Main(m) }

// Reading is the row type of the example's tables.
type Reading struct {
	Sensor string  `iceberg:"sensor,required"`
	Value  float64 `iceberg:"value,required"`
	Offset int64   `iceberg:"offset,required"`
}

// Readings is a batch of Readings from offsets [Src.Start, Src.End) of one
// source partition: what icebergio.Write takes.
type Readings struct {
	Src  offsets.Range
	Rows []Reading
}

func (b Readings) Range() offsets.Range  { return b.Src }
func (b Readings) RowSlice() any         { return b.Rows }
func (b Readings) RowOffset(i int) int64 { return b.Rows[i].Offset }

func init() {
	beam.RegisterType(reflect.TypeOf((*Readings)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Reading)(nil)).Elem())
}

// Read the rows that a table's append snapshots added, as a downstream
// pipeline would: plan the read from what the downstream table committed
// (nothing yet), then turn the snapshots into rows.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "snapshots-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cat := icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	src := tables.Table{Ident: "lab.readings", Row: Reading{}}
	sink, err := icebergio.Open(ctx, cat, src, "writer")
	if err != nil {
		panic(err)
	}
	p, s := beam.NewPipelineWithRoot()
	batches := beam.CreateList(s, []Readings{{
		Src:  offsets.Range{Topic: "sensors", Partition: 0, Start: 0, End: 3},
		Rows: []Reading{{"a", 1.5, 0}, {"b", 2.5, 1}, {"a", 3.5, 2}},
	}})
	icebergio.Write(s, sink, offsets.Offsets{"sensors": {0: 0}}, batches)
	if err := ptest.Run(p); err != nil {
		panic(err)
	}

	down, err := icebergio.Open(ctx, cat, tables.Table{Ident: "lab.copy", Row: Reading{}}, "copier")
	if err != nil {
		panic(err)
	}
	read, start, err := snapshots.ResumeSource(ctx, cat, src.Ident, true, down)
	if err != nil {
		panic(err)
	}
	p, s = beam.NewPipelineWithRoot()
	got := snapshots.Rows(s, snapshots.ReadSnapshots(s, read), Reading{})
	passert.Equals(s, got, Reading{"a", 1.5, 0}, Reading{"b", 2.5, 1}, Reading{"a", 3.5, 2})
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	fmt.Printf("read snapshots after %d up to %d; the copy starts at %v\n", read.After, read.Until, start)
	// Output: read snapshots after 0 up to 1; the copy starts at iceberg:lab.readings/0=1
}
