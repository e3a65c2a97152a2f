package rows

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
)

// allTypes has one column of every supported type and tag option.
type allTypes struct {
	Str      string   `iceberg:"str,required"`
	OptStr   *string  `iceberg:"opt_str"`
	Bytes    []byte   `iceberg:"bytes"`
	Bool     bool     `iceberg:"bool,required"`
	OptBool  *bool    `iceberg:"opt_bool"`
	I32      int32    `iceberg:"i32,required"`
	OptI32   *int32   `iceberg:"opt_i32"`
	I64      int64    `iceberg:"i64"` // optional, never null
	OptI64   *int64   `iceberg:"opt_i64"`
	F64      float64  `iceberg:"f64,required"`
	OptF64   *float64 `iceberg:"opt_f64"`
	TsTz     int64    `iceberg:"ts_tz,required,timestamptz"`
	OptTsTz  *int64   `iceberg:"opt_ts_tz,timestamptz"`
	Ts       int64    `iceberg:"ts,timestamp"`
	Day      int32    `iceberg:"day,date"`
	OptDay   *int32   `iceberg:"opt_day,date"`
	Ignored  string   // no tag
	Skipped  string   `iceberg:"-"`
	internal int      //nolint:unused // unexported, untagged: ignored
}

// field is a column as a test compares it.
type field struct {
	ID       int
	Name     string
	Type     string
	Required bool
}

func fieldsOf(sc *iceberg.Schema) []field {
	var out []field
	for _, f := range sc.Fields() {
		out = append(out, field{f.ID, f.Name, f.Type.String(), f.Required})
	}
	return out
}

func TestSchemaOf(t *testing.T) {
	type oneCol struct {
		At int64 `iceberg:"at,required,timestamptz"`
	}
	tests := []struct {
		name string
		row  any
		want []field
	}{
		{"every type", allTypes{}, []field{
			{1, "str", "string", true},
			{2, "opt_str", "string", false},
			{3, "bytes", "binary", false},
			{4, "bool", "boolean", true},
			{5, "opt_bool", "boolean", false},
			{6, "i32", "int", true},
			{7, "opt_i32", "int", false},
			{8, "i64", "long", false},
			{9, "opt_i64", "long", false},
			{10, "f64", "double", true},
			{11, "opt_f64", "double", false},
			{12, "ts_tz", "timestamptz", true},
			{13, "opt_ts_tz", "timestamptz", false},
			{14, "ts", "timestamp", false},
			{15, "day", "date", false},
			{16, "opt_day", "date", false},
		}},
		{"pointer to the row", &oneCol{}, []field{{1, "at", "timestamptz", true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := SchemaOf(tc.row)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, fieldsOf(sc)); diff != "" {
				t.Errorf("SchemaOf(%T) (-want +got):\n%s", tc.row, diff)
			}
		})
	}
}

func TestSchemaOfBadTypes(t *testing.T) {
	tests := []struct {
		name string
		row  any
	}{
		{"nil", nil},
		{"not a struct", 42},
		{"no tagged fields", struct{ A string }{}},
		{"int", struct {
			A int `iceberg:"a"`
		}{}},
		{"uint32", struct {
			A uint32 `iceberg:"a"`
		}{}},
		{"float32", struct {
			A float32 `iceberg:"a"`
		}{}},
		{"map", struct {
			A map[string]string `iceberg:"a"`
		}{}},
		{"slice of strings", struct {
			A []string `iceberg:"a"`
		}{}},
		{"pointer to bytes", struct {
			A *[]byte `iceberg:"a"`
		}{}},
		{"pointer to pointer", struct {
			A **string `iceberg:"a"`
		}{}},
		{"nested struct", struct {
			A struct{ B string } `iceberg:"a"`
		}{}},
		{"timestamptz on a string", struct {
			A string `iceberg:"a,timestamptz"`
		}{}},
		{"timestamptz on an int32", struct {
			A int32 `iceberg:"a,timestamptz"`
		}{}},
		{"date on an int64", struct {
			A int64 `iceberg:"a,date"`
		}{}},
		{"unknown option", struct {
			A string `iceberg:"a,nullable"`
		}{}},
		{"empty name", struct {
			A string `iceberg:",required"`
		}{}},
		{"repeated name", struct {
			A string `iceberg:"a"`
			B string `iceberg:"a"`
		}{}},
		{"required pointer", struct {
			A *string `iceberg:"a,required"`
		}{}},
		{"required bytes", struct {
			A []byte `iceberg:"a,required"`
		}{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := SchemaOf(tc.row)
			if !errors.Is(err, ErrRowType) {
				t.Fatalf("SchemaOf(%T) = %v, %v; want an error wrapping ErrRowType", tc.row, sc, err)
			}
		})
	}
}

func TestCheckCompatible(t *testing.T) {
	type row struct {
		ID   int64   `iceberg:"id,required"`
		Name *string `iceberg:"name"`
	}
	rt, err := rowTypeOf(reflect.TypeFor[row]())
	if err != nil {
		t.Fatal(err)
	}
	f := func(id int, name string, typ iceberg.Type, required bool) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: typ, Required: required}
	}
	long, str := iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.String
	tests := []struct {
		name   string
		fields []iceberg.NestedField
		ok     bool
	}{
		{"same", []iceberg.NestedField{f(1, "id", long, true), f(2, "name", str, false)}, true},
		{"ids renumbered", []iceberg.NestedField{f(7, "name", str, false), f(9, "id", long, true)}, true},
		{"table column optional where the row requires it", []iceberg.NestedField{f(1, "id", long, false), f(2, "name", str, false)}, true},
		{"extra optional table column", []iceberg.NestedField{f(1, "id", long, true), f(2, "name", str, false), f(3, "x", str, false)}, true},
		{"extra required table column", []iceberg.NestedField{f(1, "id", long, true), f(2, "name", str, false), f(3, "x", str, true)}, false},
		{"column missing from the table", []iceberg.NestedField{f(1, "id", long, true)}, false},
		{"type differs", []iceberg.NestedField{f(1, "id", str, true), f(2, "name", str, false)}, false},
		{"required in the table, optional in the row", []iceberg.NestedField{f(1, "id", long, true), f(2, "name", str, true)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := rt.CheckCompatible(iceberg.NewSchema(0, tc.fields...))
			if tc.ok && err != nil {
				t.Fatalf("checkCompatible = %v, want nil", err)
			}
			if !tc.ok && !errors.Is(err, ErrIncompatibleSchema) {
				t.Fatalf("checkCompatible = %v, want ErrIncompatibleSchema", err)
			}
		})
	}
}

// cells renders every cell of a record as text, "null" for null, so that
// nulls and empty values can be told apart.
func cells(rec arrow.RecordBatch) map[string][]string {
	out := map[string][]string{}
	for i, f := range rec.Schema().Fields() {
		col := rec.Column(i)
		for r := 0; r < col.Len(); r++ {
			v := "null"
			if !col.IsNull(r) {
				switch a := col.(type) {
				case *array.Binary:
					v = fmt.Sprintf("%q", a.Value(r))
				case *array.String:
					v = fmt.Sprintf("%q", a.Value(r))
				default:
					v = a.ValueStr(r)
				}
			}
			out[f.Name] = append(out[f.Name], v)
		}
	}
	return out
}

func TestAppender(t *testing.T) {
	s, b, i32, i64, f64 := "s", true, int32(7), int64(8), 1.5
	rows := []allTypes{
		{Str: "skipped row", Bytes: []byte("x")},
		// every optional value present; the empty []byte is not null
		{Str: "full", OptStr: &s, Bytes: []byte{}, Bool: true, OptBool: &b, I32: 1, OptI32: &i32,
			I64: 2, OptI64: &i64, F64: 0.5, OptF64: &f64, TsTz: 1_000_000, OptTsTz: &i64, Ts: 3, Day: 4, OptDay: &i32},
		// every pointer nil, and a nil []byte: all null
		{Str: "empty"},
	}
	rt, err := rowTypeOf(reflect.TypeFor[allTypes]())
	if err != nil {
		t.Fatal(err)
	}
	// The table has one more optional column than the row type: it is null.
	sc := iceberg.NewSchema(0, append(rt.Schema().Fields(),
		iceberg.NestedField{ID: 100, Name: "extra", Type: iceberg.PrimitiveTypes.String})...)
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer bld.Release()
	NewAppender(rt, bld).AppendSlice(reflect.ValueOf(rows), 1, len(rows))
	rec := bld.NewRecordBatch()
	defer rec.Release()

	want := map[string][]string{
		"str":       {`"full"`, `"empty"`},
		"opt_str":   {`"s"`, "null"},
		"bytes":     {`""`, "null"},
		"bool":      {"true", "false"},
		"opt_bool":  {"true", "null"},
		"i32":       {"1", "0"},
		"opt_i32":   {"7", "null"},
		"i64":       {"2", "0"},
		"opt_i64":   {"8", "null"},
		"f64":       {"0.5", "0"},
		"opt_f64":   {"1.5", "null"},
		"ts_tz":     {"1970-01-01T00:00:01Z", "1970-01-01T00:00:00Z"},
		"opt_ts_tz": {"1970-01-01T00:00:00.000008Z", "null"},
		"ts":        {"1970-01-01T00:00:00.000003", "1970-01-01T00:00:00"},
		"day":       {"1970-01-05", "1970-01-01"},
		"opt_day":   {"1970-01-08", "null"},
		"extra":     {"null", "null"},
	}
	if diff := cmp.Diff(want, cells(rec)); diff != "" {
		t.Errorf("appended cells (-want +got):\n%s", diff)
	}
}

type pair struct {
	K string `iceberg:"k,required"`
	V []byte `iceberg:"v"`
}

type withList struct {
	ID    int32  `iceberg:"id,required"`
	Pairs []pair `iceberg:"pairs"`
}

// A list column is one append of nulls when no row of the slice fills it,
// and cell by cell otherwise: both give the same cells.
func TestAppenderLists(t *testing.T) {
	rt, err := rowTypeOf(reflect.TypeFor[withList]())
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(rt.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer bld.Release()
	app := NewAppender(rt, bld)
	app.AppendSlice(reflect.ValueOf([]withList{{ID: 1}, {ID: 2}}), 0, 2) // no list
	mixed := []withList{{ID: 3}, {ID: 4, Pairs: []pair{}}, {ID: 5, Pairs: []pair{{K: "a", V: []byte("x")}, {K: "b"}}}}
	app.AppendSlice(reflect.ValueOf(mixed), 0, len(mixed))
	rec := bld.NewRecordBatch()
	defer rec.Release()
	want := map[string][]string{
		"id":    {"1", "2", "3", "4", "5"},
		"pairs": {"null", "null", "null", "[]", `[{"k":"a","v":"eA=="},{"k":"b","v":null}]`},
	}
	if diff := cmp.Diff(want, cells(rec)); diff != "" {
		t.Errorf("appended cells (-want +got):\n%s", diff)
	}
}
