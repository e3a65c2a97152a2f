package rows

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
)

func TestSplitOverflow(t *testing.T) {
	cols := []PromotedCol{
		{ID: 10, Name: "region", Member: "region", Type: iceberg.PrimitiveTypes.String},
		{ID: 11, Name: "n", Member: "amount", Type: iceberg.PrimitiveTypes.Int64},
		{ID: 12, Name: "ok", Member: "ok", Type: iceberg.PrimitiveTypes.Bool},
		{ID: 13, Name: "at", Member: "at", Type: iceberg.PrimitiveTypes.TimestampTz},
		{ID: 14, Name: "score", Member: "score", Type: iceberg.PrimitiveTypes.Float64},
		{ID: 15, Name: "small", Member: "small", Type: iceberg.PrimitiveTypes.Int32},
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name, in string
		rest     *string
		vals     []cell
		bad      []int
	}{
		{"nothing promoted", `{"x":1}`, str(`{"x":1}`), make([]cell, 6), nil},
		{"all promoted", `{"region":"eu","amount":5}`, nil,
			[]cell{{set: true, s: "eu"}, {set: true, i: 5}, {}, {}, {}, {}}, nil},
		{"rest keeps order and nesting", `{"a":[1,{"b":"}"}],"region":"e\"u","z":{"q":null}}`, str(`{"a":[1,{"b":"}"}],"z":{"q":null}}`),
			[]cell{{set: true, s: `e"u`}, {}, {}, {}, {}, {}}, nil},
		{"wrong types stay", `{"region":7,"amount":1.5,"ok":"yes","at":"noon","score":"x","small":4294967296}`,
			str(`{"region":7,"amount":1.5,"ok":"yes","at":"noon","score":"x","small":4294967296}`), make([]cell, 6), []int{0, 1, 2, 3, 4, 5}},
		{"every type", `{"ok":false,"at":"2026-05-19T12:01:11.508+02:00","score":-2.5e3,"small":-3,"amount":null}`, nil,
			[]cell{{}, {}, {set: true}, {set: true, i: 1779184871508000}, {set: true, f: -2500}, {set: true, i: -3}}, nil},
		{"sub-microsecond time stays", `{"at":"2026-05-19T10:00:00.1234567Z"}`, str(`{"at":"2026-05-19T10:00:00.1234567Z"}`), make([]cell, 6), []int{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			vals := make([]cell, len(cols))
			rest, bad := splitOverflow(c.in, cols, vals, nil)
			if diff := cmp.Diff(c.rest, rest); diff != "" {
				t.Errorf("rest (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.vals, vals, cmp.AllowUnexported(cell{})); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.bad, bad); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFoldIntoObject(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		in   *string
		add  map[string]string
		want *string
	}{
		{nil, map[string]string{"b": `"x"`, "a": "1"}, str(`{"a":1,"b":"x"}`)},
		{str(`{"n":2}`), map[string]string{"region": `"eu"`}, str(`{"n":2,"region":"eu"}`)},
		{str(`{}`), map[string]string{"q\"": "true"}, str(`{"q\"":true}`)},
		{str(`{"n":2}`), nil, str(`{"n":2}`)},
	} {
		if diff := cmp.Diff(c.want, foldIntoObject(c.in, c.add)); diff != "" {
			t.Errorf("fold %v into %v (-want +got):\n%s", c.add, c.in, diff)
		}
	}
}

func TestPromotedProperty(t *testing.T) {
	m := map[int]string{10: "region", 12: "amount"}
	got, err := DecodePromoted(EncodePromoted(m))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`[1]`, `{"x":"region"}`, `{"10":""}`} {
		if _, err := DecodePromoted(bad); err == nil {
			t.Errorf("decodePromoted(%s): no error", bad)
		}
	}
}

func TestOverflowTag(t *testing.T) {
	type two struct {
		A *string `iceberg:"a,overflow"`
		B *string `iceberg:"b,overflow"`
	}
	type notString struct {
		A *int64 `iceberg:"a,overflow"`
	}
	for _, v := range []any{two{}, notString{}} {
		if _, err := SchemaOf(v); err == nil {
			t.Errorf("%T: no error", v)
		}
	}
}

// BenchmarkSplitOverflow measures the per-row cost of promotion: one
// promoted member out of an extra of three.
func BenchmarkSplitOverflow(b *testing.B) {
	cols := []PromotedCol{{ID: 10, Name: "region", Member: "region", Type: iceberg.PrimitiveTypes.String},
		{ID: 11, Name: "amount", Member: "amount", Type: iceberg.PrimitiveTypes.Int64}}
	vals := make([]cell, len(cols))
	var bad []int
	obj := `{"n":12345,"region":"eu","amount":42,"tags":["a","b"]}`
	for b.Loop() {
		_, bad = splitOverflow(obj, cols, vals, bad[:0])
	}
}
