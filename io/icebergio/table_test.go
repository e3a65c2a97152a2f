package icebergio_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
)

type partRow struct {
	Source *string `iceberg:"source"`
	At     int64   `iceberg:"at,required,timestamptz"`
	N      int64   `iceberg:"n,required"`
}

func TestEnsureTableCreates(t *testing.T) {
	ctx := context.Background()
	_, cat := icebergtest.Catalog(t)
	def := tables.Table{Ident: "lake.parts", Row: partRow{},
		Partition:  []tables.PartitionField{{Column: "at", Transform: "day"}, {Column: "source", Transform: "identity"}},
		Properties: map[string]string{"write.parquet.compression-codec": "snappy", "owner": "haade"}}
	tbl, err := icebergio.EnsureTable(ctx, cat, def)
	if err != nil {
		t.Fatal(err)
	}

	type pf struct{ Source, Name, Transform string }
	var got []pf
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		src, _ := tbl.Schema().FindColumnName(f.SourceID())
		got = append(got, pf{src, f.Name, f.Transform.String()})
	}
	want := []pf{{"at", "at_day", "day"}, {"source", "source", "identity"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partition spec (-want +got):\n%s", diff)
	}

	if v := tbl.Metadata().Version(); v != 2 {
		t.Errorf("format version %d, want 2", v)
	}
	props := tbl.Properties()
	for k, v := range icebergio.DefaultProperties {
		if k == "format-version" {
			continue // kept in the metadata's version, checked above
		}
		if k == "write.parquet.compression-codec" {
			v = "snappy" // Table.Properties win over the defaults
		}
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
	if props["owner"] != "haade" {
		t.Errorf("property owner = %q, want haade", props["owner"])
	}
	want2, _ := rows.SchemaOf(partRow{})
	type col struct {
		Name, Type string
		Required   bool
	}
	var gotCols, wantCols []col
	for _, f := range tbl.Schema().Fields() {
		gotCols = append(gotCols, col{f.Name, f.Type.String(), f.Required})
	}
	for _, f := range want2.Fields() {
		wantCols = append(wantCols, col{f.Name, f.Type.String(), f.Required})
	}
	if diff := cmp.Diff(wantCols, gotCols); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}

	// A second call, as every later run makes, loads the same table.
	again, err := icebergio.EnsureTable(ctx, cat, def)
	if err != nil {
		t.Fatalf("second EnsureTable: %v", err)
	}
	if again.Location() != tbl.Location() || again.Metadata().CurrentSchema().ID != tbl.Schema().ID {
		t.Errorf("second EnsureTable gave another table: %s, want %s", again.Location(), tbl.Location())
	}
	// A compatible row type (a subset, with the optional column left out)
	// may write into the existing table.
	type subset struct {
		At int64 `iceberg:"at,required,timestamptz"`
		N  int64 `iceberg:"n,required"`
	}
	if _, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: "lake.parts", Row: subset{}}); err != nil {
		t.Errorf("EnsureTable with a compatible subset: %v", err)
	}
}

func TestEnsureTableIncompatible(t *testing.T) {
	type nAsString struct {
		Source *string `iceberg:"source"`
		At     int64   `iceberg:"at,required,timestamptz"`
		N      string  `iceberg:"n,required"`
	}
	type nOptional struct {
		Source *string `iceberg:"source"`
		At     int64   `iceberg:"at,required,timestamptz"`
		N      *int64  `iceberg:"n"`
	}
	type withoutN struct {
		Source *string `iceberg:"source"`
		At     int64   `iceberg:"at,required,timestamptz"`
	}
	type extraColumn struct {
		Source *string `iceberg:"source"`
		At     int64   `iceberg:"at,required,timestamptz"`
		N      int64   `iceberg:"n,required"`
		More   string  `iceberg:"more,required"`
	}
	type atWithoutZone struct {
		Source *string `iceberg:"source"`
		At     int64   `iceberg:"at,required,timestamp"`
		N      int64   `iceberg:"n,required"`
	}
	tests := []struct {
		name string
		row  any
	}{
		{"column type differs", nAsString{}},
		{"timestamp without zone", atWithoutZone{}},
		{"required column optional in the row", nOptional{}},
		{"required column missing from the row", withoutN{}},
		{"required column missing from the table", extraColumn{}},
	}
	ctx := context.Background()
	_, cat := icebergtest.Catalog(t)
	if _, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: "lake.parts", Row: partRow{}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: "lake.parts", Row: tc.row})
			if !errors.Is(err, icebergio.ErrIncompatibleSchema) {
				t.Fatalf("EnsureTable(%T) = %v, want ErrIncompatibleSchema", tc.row, err)
			}
		})
	}
}

func TestEnsureTableBadDefinition(t *testing.T) {
	tests := []struct {
		name    string
		def     tables.Table
		rowType bool // want ErrRowType
	}{
		{"no namespace", tables.Table{Ident: "parts", Row: partRow{}}, false},
		{"empty part", tables.Table{Ident: "lake..parts", Row: partRow{}}, false},
		{"no row", tables.Table{Ident: "lake.parts"}, true},
		{"bad row", tables.Table{Ident: "lake.parts", Row: struct{ A int }{}}, true},
		{"unknown partition column", tables.Table{Ident: "lake.parts", Row: partRow{},
			Partition: []tables.PartitionField{{Column: "nope", Transform: "day"}}}, false},
		{"unknown transform", tables.Table{Ident: "lake.parts", Row: partRow{},
			Partition: []tables.PartitionField{{Column: "at", Transform: "fortnight"}}}, false},
		{"day of a string", tables.Table{Ident: "lake.parts", Row: partRow{},
			Partition: []tables.PartitionField{{Column: "source", Transform: "day"}}}, false},
	}
	ctx := context.Background()
	_, cat := icebergtest.Catalog(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := icebergio.EnsureTable(ctx, cat, tc.def)
			if err == nil {
				t.Fatalf("EnsureTable = %v, want an error", tbl.Identifier())
			}
			if tc.rowType && !errors.Is(err, icebergio.ErrRowType) {
				t.Fatalf("EnsureTable = %v, want ErrRowType", err)
			}
		})
	}
}
