package rows

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// A row type is a Go struct whose exported fields carry `iceberg` tags:
//
//	type Row struct {
//		Source    *string `iceberg:"source"`                      // optional string
//		Timestamp int64   `iceberg:"timestamp,required,timestamptz"` // microseconds, UTC
//	}
//
// The tag is the column name, then options: "required" makes the column
// required; "timestamptz" or "timestamp" store an int64 of microseconds
// since the epoch as an Iceberg timestamp; "date" stores an int32 of days.
// A pointer field is optional and nil is null; a non-pointer field without
// "required" is optional but never null. Fields without a tag are ignored.
//
// Supported Go types: string, []byte, bool, int32, int64, float64, and
// pointers to each (except []byte, where nil is null); and a slice of a
// struct of those, tagged the same way, which is a list of structs (nil is
// null; bronze's kafka_headers).
//
// "overflow" marks a *string column that holds a JSON object of the source
// members the row type has no field for (bronze's extra). A table may
// promote such members to columns of their own (see PromotedProperty): the
// writer then moves them out of the overflow into their columns, and a read
// into the row type folds columns it lacks back into the overflow.

// column is one tagged field of a row type.
type column struct {
	name     string
	required bool
	typ      iceberg.Type
	offset   uintptr
	kind     reflect.Kind // of the element type
	pointer  bool
	// elem is the row type of the elements of a list column (a slice of
	// structs); nil for every other column.
	elem *Type
}

// Type describes a row struct: its columns and how to read them fast.
// TypeOf returns it.
type Type struct {
	goType  reflect.Type
	columns []column
	// overflow is the index in columns of the "overflow" column, or -1.
	overflow int
}

// rowTypeOf parses the iceberg tags of a struct type.
func rowTypeOf(t reflect.Type) (*Type, error) {
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %v is not a struct", ErrRowType, t)
	}
	rt := &Type{goType: t, overflow: -1}
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("iceberg")
		if !ok || tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		c := column{name: parts[0], offset: f.Offset}
		if c.name == "" || seen[c.name] {
			return nil, fmt.Errorf("%w: %v.%s: empty or repeated column name %q", ErrRowType, t, f.Name, c.name)
		}
		seen[c.name] = true
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			c.pointer = true
			ft = ft.Elem()
		}
		c.kind = ft.Kind()
		var timeType iceberg.Type
		for _, o := range parts[1:] {
			switch o {
			case "overflow":
				if rt.overflow >= 0 || !c.pointer || ft.Kind() != reflect.String {
					return nil, fmt.Errorf("%w: %v.%s: overflow wants one *string column", ErrRowType, t, f.Name)
				}
				rt.overflow = len(rt.columns)
			case "required":
				c.required = true
			case "timestamptz":
				timeType = iceberg.PrimitiveTypes.TimestampTz
			case "timestamp":
				timeType = iceberg.PrimitiveTypes.Timestamp
			case "date":
				timeType = iceberg.PrimitiveTypes.Date
			default:
				return nil, fmt.Errorf("%w: %v.%s: unknown tag option %q", ErrRowType, t, f.Name, o)
			}
		}
		switch {
		case ft.Kind() == reflect.String:
			c.typ = iceberg.PrimitiveTypes.String
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8 && !c.pointer:
			c.typ = iceberg.PrimitiveTypes.Binary
			c.kind = reflect.Slice
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !c.pointer:
			et, err := rowTypeOf(ft.Elem())
			if err != nil {
				return nil, err
			}
			for _, ec := range et.columns {
				if ec.elem != nil {
					return nil, fmt.Errorf("%w: %v.%s: a list's elements cannot hold lists", ErrRowType, t, f.Name)
				}
			}
			if et.overflow >= 0 {
				return nil, fmt.Errorf("%w: %v.%s: a list's elements cannot have an overflow column", ErrRowType, t, f.Name)
			}
			c.elem = et
			c.kind = reflect.Slice
			// Field ids are placeholders here: Schema numbers them.
			c.typ = &iceberg.ListType{Element: et.structType(func() int { return 0 }), ElementRequired: true}
		case ft.Kind() == reflect.Bool:
			c.typ = iceberg.PrimitiveTypes.Bool
		case ft.Kind() == reflect.Int32 && timeType == iceberg.PrimitiveTypes.Date:
			c.typ = timeType
		case ft.Kind() == reflect.Int32:
			c.typ = iceberg.PrimitiveTypes.Int32
		case ft.Kind() == reflect.Int64 && timeType != nil && timeType != iceberg.PrimitiveTypes.Date:
			c.typ = timeType
		case ft.Kind() == reflect.Int64:
			c.typ = iceberg.PrimitiveTypes.Int64
		case ft.Kind() == reflect.Float64:
			c.typ = iceberg.PrimitiveTypes.Float64
		default:
			return nil, fmt.Errorf("%w: %v.%s: unsupported type %v", ErrRowType, t, f.Name, f.Type)
		}
		if timeType != nil && c.typ != timeType {
			return nil, fmt.Errorf("%w: %v.%s: %v cannot hold a %v", ErrRowType, t, f.Name, f.Type, timeType)
		}
		if c.required && (c.pointer || c.kind == reflect.Slice) {
			return nil, fmt.Errorf("%w: %v.%s: a required column cannot be a pointer or a slice", ErrRowType, t, f.Name)
		}
		rt.columns = append(rt.columns, c)
	}
	if len(rt.columns) == 0 {
		return nil, fmt.Errorf("%w: %v has no iceberg-tagged fields", ErrRowType, t)
	}
	return rt, nil
}

// SchemaOf returns the Iceberg schema of a row type (see the package doc on
// tags). Field ids are 1..n in field order; catalogs may renumber them when
// the table is created.
func SchemaOf(row any) (*iceberg.Schema, error) {
	t := reflect.TypeOf(row)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	rt, err := rowTypeOf(t)
	if err != nil {
		return nil, err
	}
	return rt.Schema(), nil
}

// Schema returns the Iceberg schema of the row type (see SchemaOf): the
// columns are fields 1..n, in order, and the fields of list columns'
// elements come after them.
func (rt *Type) Schema() *iceberg.Schema {
	next := len(rt.columns)
	id := func() int { next++; return next }
	fields := make([]iceberg.NestedField, len(rt.columns))
	for i, c := range rt.columns {
		fields[i] = iceberg.NestedField{ID: i + 1, Name: c.name, Type: c.typ, Required: c.required}
		if c.elem != nil {
			fields[i].Type = &iceberg.ListType{ElementID: id(), Element: c.elem.structType(id), ElementRequired: true}
		}
	}
	return iceberg.NewSchema(0, fields...)
}

// structType is the Iceberg struct of a list column's element type, its
// fields numbered by id.
func (rt *Type) structType(id func() int) *iceberg.StructType {
	st := &iceberg.StructType{FieldList: make([]iceberg.NestedField, len(rt.columns))}
	for i, c := range rt.columns {
		st.FieldList[i] = iceberg.NestedField{ID: id(), Name: c.name, Type: c.typ, Required: c.required}
	}
	return st
}

// SameType reports whether a and b are the same Iceberg type, whatever
// the field ids of their nested fields: a table numbers them when it is
// created, or when it gains a column, so a row type's own ids never match.
func SameType(a, b iceberg.Type) bool {
	switch x := a.(type) {
	case *iceberg.ListType:
		y, ok := b.(*iceberg.ListType)
		return ok && x.ElementRequired == y.ElementRequired && SameType(x.Element, y.Element)
	case *iceberg.StructType:
		y, ok := b.(*iceberg.StructType)
		if !ok || len(x.FieldList) != len(y.FieldList) {
			return false
		}
		for i, f := range x.FieldList {
			g := y.FieldList[i]
			if f.Name != g.Name || f.Required != g.Required || !SameType(f.Type, g.Type) {
				return false
			}
		}
		return true
	case *iceberg.MapType:
		y, ok := b.(*iceberg.MapType)
		return ok && x.ValueRequired == y.ValueRequired && SameType(x.KeyType, y.KeyType) && SameType(x.ValueType, y.ValueType)
	}
	return a.Equals(b)
}

// Missing returns the optional columns of the row type that schema sc
// lacks, as the fields to add (ids left to the table): what a table
// created before them must gain, by schema evolution, to take the rows. A
// missing required column is not among them: files written before it have
// no value for it.
func (rt *Type) Missing(sc *iceberg.Schema) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, f := range rt.Schema().Fields() {
		if _, ok := sc.FindFieldByName(f.Name); !ok && !f.Required {
			out = append(out, f)
		}
	}
	return out
}

// CheckCompatible reports whether rows of this type can be written into a
// table with schema sc: every column must exist with the same type, a
// required table column must be required here, and any table column that
// this type lacks must be optional (it is written as null).
func (rt *Type) CheckCompatible(sc *iceberg.Schema) error {
	byName := map[string]column{}
	for _, c := range rt.columns {
		byName[c.name] = c
		f, ok := sc.FindFieldByName(c.name)
		if !ok {
			return fmt.Errorf("%w: column %q is missing from the table", ErrIncompatibleSchema, c.name)
		}
		if !SameType(f.Type, c.typ) {
			return fmt.Errorf("%w: column %q is %v in the table, %v in %v", ErrIncompatibleSchema, c.name, f.Type, c.typ, rt.goType)
		}
		if f.Required && !c.required {
			return fmt.Errorf("%w: column %q is required in the table but optional in %v", ErrIncompatibleSchema, c.name, rt.goType)
		}
	}
	for _, f := range sc.Fields() {
		if _, ok := byName[f.Name]; !ok && f.Required {
			return fmt.Errorf("%w: the table requires column %q, which %v does not have", ErrIncompatibleSchema, f.Name, rt.goType)
		}
	}
	return nil
}

// Appender appends rows of one type to a RecordBuilder of one Arrow schema.
type Appender struct {
	rt    *Type
	size  uintptr
	cols  []int // arrow field index -> column index, or -1 for "always null"
	build *array.RecordBuilder
	// scratch holds a column's cells for one bulk append (appendColumn).
	scratch scratch

	// Promoted columns, filled from the row type's overflow column.
	prom    []PromotedCol
	promIdx []int // arrow field index of each of prom
	vals    []cell
	bad     []int
	// Mismatch is called with the name of a promoted column whose member
	// did not fit it (nil: not counted).
	Mismatch func(column string)
}

// NewAppender returns an Appender of rows of rt into b.
func NewAppender(rt *Type, b *array.RecordBuilder) *Appender {
	return NewPromotingAppender(rt, b, nil)
}

// NewPromotingAppender is NewAppender for a table with promoted columns:
// when the row type has an overflow column, the members of prom are moved
// out of it into their columns.
func NewPromotingAppender(rt *Type, b *array.RecordBuilder, prom []PromotedCol) *Appender {
	sc := b.Schema()
	a := &Appender{rt: rt, size: rt.goType.Size(), build: b, cols: make([]int, sc.NumFields())}
	for i, f := range sc.Fields() {
		a.cols[i] = -1
		for j, c := range rt.columns {
			if c.name == f.Name {
				a.cols[i] = j
			}
		}
	}
	if rt.overflow < 0 {
		return a
	}
	for _, p := range prom {
		for i, f := range sc.Fields() {
			if f.Name == p.Name && a.cols[i] < 0 {
				a.prom = append(a.prom, p)
				a.promIdx = append(a.promIdx, i)
			}
		}
	}
	a.vals = make([]cell, len(a.prom))
	return a
}

// AppendSlice appends rows[lo:hi] of a slice of the row type, a column at a
// time. It reads the struct fields through their offsets: the type was
// checked once, when the row type was parsed, so the per-cell cost is a
// load, and each column is one bulk append.
func (a *Appender) AppendSlice(rows reflect.Value, lo, hi int) {
	if hi <= lo {
		return
	}
	base := rows.Index(lo).Addr().UnsafePointer()
	n := hi - lo
	var rests []*string
	if len(a.prom) > 0 {
		rests = a.promote(base, n)
	}
	for i, ci := range a.cols {
		fb := a.build.Field(i)
		if ci < 0 {
			if !slices.Contains(a.promIdx, i) {
				fb.AppendNulls(n)
			}
			continue
		}
		c := a.rt.columns[ci]
		fb.Reserve(n)
		if rests != nil && ci == a.rt.overflow {
			sb := fb.(*array.StringBuilder)
			for _, r := range rests {
				if r == nil {
					sb.AppendNull()
				} else {
					sb.Append(*r)
				}
			}
			continue
		}
		a.appendColumn(fb, c, base, n)
	}
}

// promote appends the promoted columns of n rows from base, and returns
// each row's overflow without the members it moved.
func (a *Appender) promote(base unsafe.Pointer, n int) []*string {
	over := a.rt.columns[a.rt.overflow]
	rests := make([]*string, n)
	for _, i := range a.promIdx {
		a.build.Field(i).Reserve(n)
	}
	for r := 0; r < n; r++ {
		ps := *(**string)(unsafe.Add(base, uintptr(r)*a.size+over.offset))
		if ps == nil {
			for _, i := range a.promIdx {
				a.build.Field(i).AppendNull()
			}
			continue
		}
		a.bad = a.bad[:0]
		rests[r], a.bad = splitOverflow(*ps, a.prom, a.vals, a.bad)
		for k, i := range a.promIdx {
			appendCellTo(a.build.Field(i), a.vals[k])
		}
		if a.Mismatch != nil {
			for _, k := range a.bad {
				a.Mismatch(a.prom[k].Name)
			}
		}
	}
	return rests
}

func appendCell(fb array.Builder, c column, p unsafe.Pointer) {
	if c.pointer {
		p = *(*unsafe.Pointer)(p)
		if p == nil {
			fb.AppendNull()
			return
		}
	}
	switch c.kind {
	case reflect.String:
		fb.(*array.StringBuilder).Append(*(*string)(p))
	case reflect.Slice:
		if c.elem != nil {
			appendList(fb.(*array.ListBuilder), c.elem, p)
			return
		}
		v := *(*[]byte)(p)
		if v == nil {
			fb.AppendNull()
			return
		}
		fb.(*array.BinaryBuilder).Append(v)
	case reflect.Bool:
		fb.(*array.BooleanBuilder).Append(*(*bool)(p))
	case reflect.Int32:
		switch b := fb.(type) {
		case *array.Date32Builder:
			b.Append(arrow.Date32(*(*int32)(p)))
		default:
			fb.(*array.Int32Builder).Append(*(*int32)(p))
		}
	case reflect.Int64:
		switch b := fb.(type) {
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(*(*int64)(p)))
		default:
			fb.(*array.Int64Builder).Append(*(*int64)(p))
		}
	case reflect.Float64:
		fb.(*array.Float64Builder).Append(*(*float64)(p))
	}
}

// appendList appends the slice of et's structs at p to a list column: a
// nil slice is null, an empty one an empty list. The struct's Arrow fields
// are et's columns, in order (CheckCompatible compares them in order).
func appendList(lb *array.ListBuilder, et *Type, p unsafe.Pointer) {
	// The slice's header, read in place: a reflect.Value of it cost a
	// reflect.SliceOf per cell, 1.5% of bronze's CPU for a column that is
	// mostly null.
	base, n := unsafe.SliceData(*(*[]byte)(p)), len(*(*[]byte)(p))
	if base == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	if n == 0 {
		return
	}
	size := et.goType.Size()
	for i := 0; i < n; i++ {
		sb.Append(true)
		ep := unsafe.Add(unsafe.Pointer(base), uintptr(i)*size)
		for j, ec := range et.columns {
			appendCell(sb.FieldBuilder(j), ec, unsafe.Add(ep, ec.offset))
		}
	}
}
