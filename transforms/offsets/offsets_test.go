package offsets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBatchRange(t *testing.T) {
	b := Batch{Topic: "t", Partition: 3, Start: 10, End: 15, Records: []Record{{Offset: 10}, {Offset: 14}}}
	if diff := cmp.Diff(Range{Topic: "t", Partition: 3, Start: 10, End: 15}, b.Range()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := b.Range().String(), "t/3[10,15)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestEncodeDecode(t *testing.T) {
	o := Offsets{}
	o.Set("a", 0, 5)
	o.Set("a", 2, 7)
	o.Set("iceberg:lakehouse.bronze_events", 0, 12)
	s := o.Encode()
	if want := `{"a":{"0":5,"2":7},"iceberg:lakehouse.bronze_events":{"0":12}}`; s != want {
		t.Errorf("Encode() = %s, want %s", s, want)
	}
	back, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := Decode(`{"a":{"x":1}}`); err == nil {
		t.Error("Decode accepted a partition that is not a number")
	}
}

func TestMinMaxAheadBehind(t *testing.T) {
	mk := func(kv ...int64) Offsets {
		o := Offsets{}
		for i := 0; i < len(kv); i += 2 {
			o.Set("t", int32(kv[i]), kv[i+1])
		}
		return o
	}
	a, b := mk(0, 10, 1, 20), mk(0, 5, 1, 30, 2, 1)
	if diff := cmp.Diff(mk(0, 5, 1, 20), Min(a, b)); diff != "" {
		t.Errorf("Min (-want +got):\n%s", diff)
	}
	c := a.Clone()
	c.Max(b)
	if diff := cmp.Diff(mk(0, 10, 1, 30, 2, 1), c); diff != "" {
		t.Errorf("Max (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mk(0, 10, 1, 20), a); diff != "" {
		t.Errorf("Max changed the clone's source (-want +got):\n%s", diff)
	}
	if !b.Ahead(a) || a.Ahead(c) || !a.Ahead(mk(0, 10)) {
		t.Error("Ahead: want b ahead of a, a not ahead of c, a ahead of a set missing partition 1")
	}
	want := []Range{{Topic: "t", Partition: 1, Start: 20, End: 30}, {Topic: "t", Partition: 2, Start: 0, End: 1}}
	if diff := cmp.Diff(want, a.Behind(mk(2, 0), c)); diff != "" {
		t.Errorf("Behind (-want +got):\n%s", diff)
	}
	if got, want := c.String(), "t/0=10 t/1=30 t/2=1 "; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
