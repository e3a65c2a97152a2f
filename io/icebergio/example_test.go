package icebergio_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// Reading is the row type of the example's table.
type Reading struct {
	Sensor string  `iceberg:"sensor,required"`
	Value  float64 `iceberg:"value,required"`
	Offset int64   `iceberg:"offset,required"`
}

// Readings is a batch of rows from offsets [Src.Start, Src.End) of one
// source partition: what Write takes.
type Readings struct {
	Src  offsets.Range
	Rows []Reading
}

func (b Readings) Range() offsets.Range  { return b.Src }
func (b Readings) RowSlice() any         { return b.Rows }
func (b Readings) RowOffset(i int) int64 { return b.Rows[i].Offset }

func init() {
	beam.RegisterType(reflect.TypeOf((*Readings)(nil)).Elem())
}

// Write a batch of rows exactly once into a table of a SQLite catalog, then
// read back the rows and the offsets the table holds for the pipeline.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "icebergio-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cat := icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	tbl := tables.Table{Ident: "lab.readings", Row: Reading{}}
	sink, err := icebergio.Open(ctx, cat, tbl, "example-pipeline")
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

	var rows []Reading
	if err := icebergio.ScanRows(ctx, cat, tbl.Ident, &rows); err != nil {
		panic(err)
	}
	again, err := icebergio.Open(ctx, cat, tbl, "example-pipeline")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d rows; resume at %v\n", len(rows), again.Committed)
	// Output: 3 rows; resume at sensors/0=3
}
