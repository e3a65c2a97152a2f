package icebergtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	icerows "github.com/haade/haade/io/icebergio/rows"
)

// Append commits rows, a slice of a row struct (see rows.SchemaOf), to
// tbl in one append snapshot whose summary holds props and nothing of
// HAADE's, as another engine's INSERT would. It returns the table after
// the commit.
func Append(t testing.TB, tbl *table.Table, rows any, props iceberg.Properties) *table.Table {
	t.Helper()
	ctx := context.Background()
	rec := Record(t, tbl, rows)
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tx := tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, props); err != nil {
		t.Fatal(err)
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Record returns rows, a slice of a row struct, as one Arrow record batch
// of tbl's schema; the caller releases it.
func Record(t testing.TB, tbl *table.Table, rows any) arrow.RecordBatch {
	t.Helper()
	b, err := icerows.NewRowBuilder(nil, tbl.Schema(), reflect.Zero(reflect.TypeOf(rows).Elem()).Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := b.Append(rows); err != nil {
		t.Fatal(err)
	}
	return b.NewRecordBatch()
}
