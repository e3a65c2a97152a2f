package icebergio

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// ScanRows reads every row of a table's current snapshot into *rows, a
// pointer to a slice of a row struct (see SchemaOf). Columns are matched by
// name; table columns the struct lacks are skipped. It reads the whole
// table into memory: it is for tests, tools and small tables.
func ScanRows(ctx context.Context, cfg CatalogConfig, ident string, rows any, opts ...table.ScanOption) error {
	pv := reflect.ValueOf(rows)
	if pv.Kind() != reflect.Pointer || pv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("%w: ScanRows wants a pointer to a slice, got %T", ErrRowType, rows)
	}
	rt, err := cachedRowType(pv.Elem().Type().Elem())
	if err != nil {
		return err
	}
	cat, err := cfg.Open(ctx)
	if err != nil {
		return err
	}
	defer closeCatalog(cat)
	tbl, err := loadTable(ctx, cat, ident)
	if err != nil {
		return err
	}
	_, recs, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return err
	}
	out := pv.Elem()
	for rec, err := range recs {
		if err != nil {
			return err
		}
		err := appendRecord(out, rt, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func appendRecord(out reflect.Value, rt *rowType, rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	base := out.Len()
	out.Set(reflect.AppendSlice(out, reflect.MakeSlice(out.Type(), n, n)))
	sc := rec.Schema()
	for _, c := range rt.columns {
		idx := sc.FieldIndices(c.name)
		if len(idx) == 0 {
			continue
		}
		col := rec.Column(idx[0])
		for i := 0; i < n; i++ {
			p := unsafe.Add(out.Index(base+i).Addr().UnsafePointer(), c.offset)
			if col.IsNull(i) {
				continue // zero value: nil pointer, nil slice
			}
			if err := setCell(col, i, c, p); err != nil {
				return fmt.Errorf("column %s: %w", c.name, err)
			}
		}
	}
	return nil
}

func setCell(col arrow.Array, i int, c column, p unsafe.Pointer) error {
	if c.pointer {
		var v reflect.Value
		switch c.kind {
		case reflect.String:
			v = reflect.New(reflect.TypeOf(""))
		case reflect.Bool:
			v = reflect.New(reflect.TypeOf(false))
		case reflect.Int32:
			v = reflect.New(reflect.TypeOf(int32(0)))
		case reflect.Int64:
			v = reflect.New(reflect.TypeOf(int64(0)))
		case reflect.Float64:
			v = reflect.New(reflect.TypeOf(float64(0)))
		}
		*(*unsafe.Pointer)(p) = v.UnsafePointer()
		p = v.UnsafePointer()
	}
	switch a := col.(type) {
	case *array.String:
		*(*string)(p) = a.Value(i)
	case *array.LargeString:
		*(*string)(p) = a.Value(i)
	case *array.Binary:
		*(*[]byte)(p) = append([]byte{}, a.Value(i)...)
	case *array.LargeBinary:
		*(*[]byte)(p) = append([]byte{}, a.Value(i)...)
	case *array.Boolean:
		*(*bool)(p) = a.Value(i)
	case *array.Int32:
		*(*int32)(p) = a.Value(i)
	case *array.Date32:
		*(*int32)(p) = int32(a.Value(i))
	case *array.Int64:
		*(*int64)(p) = a.Value(i)
	case *array.Timestamp:
		v := int64(a.Value(i))
		if a.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			v /= 1000
		}
		*(*int64)(p) = v
	case *array.Float64:
		*(*float64)(p) = a.Value(i)
	default:
		return fmt.Errorf("unsupported arrow type %v", col.DataType())
	}
	return nil
}
