// Package icebergtest is the Iceberg test kit: a temporary SQLite catalog
// with a file:// warehouse, and helpers that read a table back, rows and
// snapshots, the way an engine we did not write would see it. It needs no
// server.
package icebergtest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
)

// Catalog returns the config of a fresh SQLite catalog and file://
// warehouse, both in t's temporary directories, and the catalog opened.
// The catalog is closed when the test ends.
func Catalog(t testing.TB) (icebergio.CatalogConfig, catalog.Catalog) {
	t.Helper()
	cfg := icebergio.CatalogConfig{URI: t.TempDir() + "/c.db", Warehouse: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cat, err := cfg.Open(ctx)
	if err != nil {
		t.Fatalf("icebergtest: open catalog: %v", err)
	}
	t.Cleanup(func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	})
	return cfg, cat
}

// Load loads table ident as it is now.
func Load(t testing.TB, cat catalog.Catalog, ident string) *table.Table {
	t.Helper()
	id, err := icebergio.Identifier(ident)
	if err != nil {
		t.Fatalf("icebergtest: %v", err)
	}
	tbl, err := cat.LoadTable(context.Background(), id)
	if err != nil {
		t.Fatalf("icebergtest: load %s: %v", ident, err)
	}
	return tbl
}

// Rows reads every row of table ident at its current snapshot with
// iceberg-go's scan, into values of T. Columns are matched to T's fields by
// the name in their `iceberg` tag (see rows.SchemaOf); pointer fields
// and []byte get nil for null. Rows come in scan order.
func Rows[T any](t testing.TB, cat catalog.Catalog, ident string) []T {
	t.Helper()
	tbl := Load(t, cat, ident)
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("icebergtest: scan %s: %v", ident, err)
	}
	var out []T
	for rec, err := range recs {
		if err != nil {
			t.Fatalf("icebergtest: scan %s: %v", ident, err)
		}
		rows, err := decode[T](rec)
		rec.Release()
		if err != nil {
			t.Fatalf("icebergtest: read %s: %v", ident, err)
		}
		out = append(out, rows...)
	}
	return out
}

// decode turns one Arrow record batch into rows of T.
func decode[T any](rec arrow.RecordBatch) ([]T, error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%v is not a struct", rt)
	}
	out := make([]T, rec.NumRows())
	for fi := 0; fi < rt.NumField(); fi++ {
		f := rt.Field(fi)
		tag, ok := f.Tag.Lookup("iceberg")
		if !ok || tag == "-" {
			continue
		}
		name := strings.Split(tag, ",")[0]
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("column %q of %v is not in the table", name, rt)
		}
		col := rec.Column(idx[0])
		for r := range out {
			dst := reflect.ValueOf(&out[r]).Elem().Field(fi)
			if err := setCell(dst, col, r); err != nil {
				return nil, fmt.Errorf("column %q row %d: %w", name, r, err)
			}
		}
	}
	return out, nil
}

func setCell(dst reflect.Value, col arrow.Array, i int) error {
	if col.IsNull(i) {
		return nil // the zero value: nil for pointers and []byte
	}
	var v any
	switch a := col.(type) {
	case *array.String:
		v = a.Value(i)
	case *array.LargeString:
		v = a.Value(i)
	case *array.Binary:
		v = append([]byte{}, a.Value(i)...)
	case *array.LargeBinary:
		v = append([]byte{}, a.Value(i)...)
	case *array.Boolean:
		v = a.Value(i)
	case *array.Int32:
		v = a.Value(i)
	case *array.Int64:
		v = a.Value(i)
	case *array.Float64:
		v = a.Value(i)
	case *array.Date32:
		v = int32(a.Value(i))
	case *array.Timestamp:
		ts := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			ts *= 1e6
		case arrow.Millisecond:
			ts *= 1e3
		case arrow.Nanosecond:
			ts /= 1e3
		}
		v = ts // microseconds, as icebergio rows hold them
	default:
		return fmt.Errorf("unsupported Arrow type %v", col.DataType())
	}
	rv := reflect.ValueOf(v)
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		if !rv.Type().ConvertibleTo(p.Elem().Type()) {
			return fmt.Errorf("cannot put %T into %v", v, dst.Type())
		}
		p.Elem().Set(rv.Convert(p.Elem().Type()))
		dst.Set(p)
		return nil
	}
	if !rv.Type().ConvertibleTo(dst.Type()) {
		return fmt.Errorf("cannot put %T into %v", v, dst.Type())
	}
	dst.Set(rv.Convert(dst.Type()))
	return nil
}

// Snapshot is one snapshot of a table, as its metadata records it.
type Snapshot struct {
	ID        int64
	ParentID  int64 // 0 for the first snapshot
	Sequence  int64
	Operation string
	Summary   map[string]string
}

// Snapshots lists every snapshot of table ident that its metadata still
// holds, oldest first (by sequence number).
func Snapshots(t testing.TB, cat catalog.Catalog, ident string) []Snapshot {
	t.Helper()
	tbl := Load(t, cat, ident)
	var out []Snapshot
	for _, s := range tbl.Metadata().Snapshots() {
		ss := Snapshot{ID: s.SnapshotID, Sequence: s.SequenceNumber, Summary: map[string]string{}}
		if s.ParentSnapshotID != nil {
			ss.ParentID = *s.ParentSnapshotID
		}
		if s.Summary != nil {
			ss.Operation = string(s.Summary.Operation)
			for k, v := range s.Summary.Properties {
				ss.Summary[k] = v
			}
		}
		out = append(out, ss)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sequence < out[j].Sequence })
	return out
}

// Haade returns the haade.* keys of a snapshot summary: the commit token
// and the offsets (docs/DESIGN.md, "Exactly once").
func (s Snapshot) Haade() map[string]string {
	out := map[string]string{}
	for k, v := range s.Summary {
		if strings.HasPrefix(k, "haade.") {
			out[k] = v
		}
	}
	return out
}
