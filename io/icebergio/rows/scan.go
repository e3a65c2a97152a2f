package rows

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// ScanTable reads every row of tbl's current snapshot (or of the scan opts
// select) into *rows, a pointer to a slice of a row struct (see SchemaOf).
// Columns are matched by name; table columns the struct lacks are skipped,
// or folded into its overflow column when it has one. It reads the whole
// scan into memory: it is for tests, tools and small tables.
func ScanTable(ctx context.Context, tbl *table.Table, rows any, opts ...table.ScanOption) error {
	pv := reflect.ValueOf(rows)
	if pv.Kind() != reflect.Pointer || pv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("%w: ScanRows wants a pointer to a slice, got %T", ErrRowType, rows)
	}
	rt, err := TypeOf(pv.Elem().Type().Elem())
	if err != nil {
		return err
	}
	members, err := PromotedMembers(tbl)
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
		err := appendRecordFold(out, rt, rec, members)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func appendRecord(out reflect.Value, rt *Type, rec arrow.RecordBatch) error {
	return appendRecordFold(out, rt, rec, nil)
}

// appendRecordFold is appendRecord that, when the row type has an overflow
// column, folds the record's columns that the row type lacks into it, as
// members named by members (column name -> member; a column not in it
// keeps its own name): a promoted column read into a row type that
// predates it is not lost.
func appendRecordFold(out reflect.Value, rt *Type, rec arrow.RecordBatch, members map[string]string) error {
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
		if !kindFits(c, col.DataType()) {
			return fmt.Errorf("%w: column %s is %v in the data, %v in %v", ErrIncompatibleSchema, c.name, col.DataType(), c.typ, rt.goType)
		}
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
	if rt.overflow >= 0 {
		foldColumns(out, base, n, rt, rec, members)
	}
	return nil
}

// foldColumns folds the columns of rec that rt lacks into the overflow
// column of rows base..base+n of out.
func foldColumns(out reflect.Value, base, n int, rt *Type, rec arrow.RecordBatch, members map[string]string) {
	type extraCol struct {
		member string
		col    arrow.Array
	}
	var extras []extraCol
	for i, f := range rec.Schema().Fields() {
		known := false
		for _, c := range rt.columns {
			if c.name == f.Name {
				known = true
				break
			}
		}
		if !known {
			m := f.Name
			if mm, ok := members[f.Name]; ok {
				m = mm
			}
			extras = append(extras, extraCol{m, rec.Column(i)})
		}
	}
	if len(extras) == 0 {
		return
	}
	over := rt.columns[rt.overflow]
	for i := 0; i < n; i++ {
		add := map[string]string{}
		for _, x := range extras {
			if v, ok := jsonCell(x.col, i); ok {
				add[x.member] = v
			}
		}
		if len(add) == 0 {
			continue
		}
		p := (**string)(unsafe.Add(out.Index(base+i).Addr().UnsafePointer(), over.offset))
		*p = foldIntoObject(*p, add)
	}
}

// kindFits reports whether setCell can store values of Arrow type dt in
// column c without loss (it would otherwise write past a narrower field).
func kindFits(c column, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return c.kind == reflect.String
	case arrow.BINARY, arrow.LARGE_BINARY:
		return c.kind == reflect.Slice && c.elem == nil
	case arrow.LIST, arrow.LARGE_LIST:
		st, ok := dt.(arrow.ListLikeType).Elem().(*arrow.StructType)
		if c.elem == nil || !ok {
			return false
		}
		for _, ec := range c.elem.columns {
			i, ok := st.FieldIdx(ec.name)
			if ok && !kindFits(ec, st.Field(i).Type) {
				return false
			}
		}
		return true
	case arrow.BOOL:
		return c.kind == reflect.Bool
	case arrow.INT32, arrow.DATE32:
		return c.kind == reflect.Int32
	case arrow.INT64, arrow.TIMESTAMP:
		return c.kind == reflect.Int64
	case arrow.FLOAT64:
		return c.kind == reflect.Float64
	}
	return false
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
	case array.ListLike:
		return setList(a, i, c.elem, p)
	default:
		return fmt.Errorf("unsupported arrow type %v", col.DataType())
	}
	return nil
}

// setList stores the list at row i of a (a list of structs) as a slice of
// et's structs at p. Fields of the struct that et lacks are left out, and
// fields et has that the data lacks stay zero.
func setList(a array.ListLike, i int, et *Type, p unsafe.Pointer) error {
	st, ok := a.ListValues().(*array.Struct)
	if !ok {
		return fmt.Errorf("a list of %v, want a list of structs", a.ListValues().DataType())
	}
	start, end := a.ValueOffsets(i)
	n := int(end - start)
	sl := reflect.MakeSlice(reflect.SliceOf(et.goType), n, n)
	stt := st.DataType().(*arrow.StructType)
	for _, ec := range et.columns {
		fi, ok := stt.FieldIdx(ec.name)
		if !ok {
			continue
		}
		col := st.Field(fi)
		for k := 0; k < n; k++ {
			if col.IsNull(int(start) + k) {
				continue
			}
			if err := setCell(col, int(start)+k, ec, unsafe.Add(sl.Index(k).Addr().UnsafePointer(), ec.offset)); err != nil {
				return fmt.Errorf("%s: %w", ec.name, err)
			}
		}
	}
	reflect.NewAt(sl.Type(), p).Elem().Set(sl)
	return nil
}
