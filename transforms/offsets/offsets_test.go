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

func TestAdvance(t *testing.T) {
	rng := func(topic string, p int32, start, end int64) Range {
		return Range{Topic: topic, Partition: p, Start: start, End: end}
	}
	o := Offsets{"t": {0: 10, 1: 20}}
	o.Advance(rng("t", 0, 10, 15), rng("t", 0, 15, 18), rng("t", 1, 5, 8), rng("t", 2, 0, 4), rng("u", 0, 3, 4))
	want := Offsets{"t": {0: 18, 1: 20, 2: 4}, "u": {0: 4}} // never backwards
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("Advance (-want +got):\n%s", diff)
	}
}

func TestAppendRange(t *testing.T) {
	rng := func(p int32, start, end int64) Range { return Range{Topic: "t", Partition: p, Start: start, End: end} }
	var rs []Range
	for _, r := range []Range{rng(0, 0, 5), rng(1, 0, 2), rng(0, 5, 9), rng(0, 12, 14), rng(1, 2, 3)} {
		rs = AppendRange(rs, r)
	}
	want := []Range{rng(0, 0, 9), rng(1, 0, 3), rng(0, 12, 14)}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("AppendRange (-want +got):\n%s", diff)
	}
}
