package icebergio

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
)

func TestOffsetsEncodeDecode(t *testing.T) {
	tests := []struct {
		name string
		o    offsets.Offsets
		json string
	}{
		{"empty", offsets.Offsets{}, `{}`},
		{"one partition", offsets.Offsets{"t": {0: 5}}, `{"t":{"0":5}}`},
		// map keys are sorted as strings
		{"several partitions", offsets.Offsets{"t": {2: 7, 10: 1, 0: 0}}, `{"t":{"0":0,"10":1,"2":7}}`},
		{"several topics", offsets.Offsets{"b": {1: 1 << 40}, "a": {0: 3}}, `{"a":{"0":3},"b":{"1":1099511627776}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.o.Encode()
			if got != tc.json {
				t.Errorf("encode = %s, want %s", got, tc.json)
			}
			back, err := decodeOffsets(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.o, back); diff != "" {
				t.Errorf("decode(encode(o)) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeOffsetsBad(t *testing.T) {
	for _, s := range []string{``, `not json`, `{"t":5}`, `{"t":{"x":1}}`, `{"t":{"0":"1"}}`, `{"t":{"0":1.5}}`, `[1]`} {
		t.Run(s, func(t *testing.T) {
			if o, err := decodeOffsets(s); !errors.Is(err, ErrBadSummary) {
				t.Fatalf("decodeOffsets(%q) = %v, %v; want ErrBadSummary", s, o, err)
			}
		})
	}
}

func TestMin(t *testing.T) {
	tests := []struct {
		name string
		sets []offsets.Offsets
		want offsets.Offsets
	}{
		{"no sets", nil, offsets.Offsets{}},
		{"one set", []offsets.Offsets{{"t": {0: 5, 1: 6}}}, offsets.Offsets{"t": {0: 5, 1: 6}}},
		{"smallest wins", []offsets.Offsets{{"t": {0: 5, 1: 9}}, {"t": {0: 7, 1: 2}}}, offsets.Offsets{"t": {0: 5, 1: 2}}},
		// a partition that one table lacks starts at its earliest offset
		{"missing from the second", []offsets.Offsets{{"t": {0: 5, 1: 9}}, {"t": {0: 7}}}, offsets.Offsets{"t": {0: 5}}},
		{"missing from the first", []offsets.Offsets{{"t": {0: 5}}, {"t": {0: 7, 1: 2}}}, offsets.Offsets{"t": {0: 5}}},
		{"an empty table", []offsets.Offsets{{"t": {0: 5}}, {}}, offsets.Offsets{}},
		{"other topics", []offsets.Offsets{{"a": {0: 1}, "b": {0: 4}}, {"b": {0: 3}}}, offsets.Offsets{"b": {0: 3}}},
		{"three sets", []offsets.Offsets{{"t": {0: 5}}, {"t": {0: 4}}, {"t": {0: 6}}}, offsets.Offsets{"t": {0: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, offsets.Min(tc.sets...)); diff != "" {
				t.Errorf("Min (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOffsetsMaxClone(t *testing.T) {
	o := offsets.Offsets{"t": {0: 5, 1: 9}}
	c := o.Clone()
	c.Max(offsets.Offsets{"t": {0: 7, 1: 2, 2: 1}, "u": {0: 3}})
	if diff := cmp.Diff(offsets.Offsets{"t": {0: 7, 1: 9, 2: 1}, "u": {0: 3}}, c); diff != "" {
		t.Errorf("Max (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(offsets.Offsets{"t": {0: 5, 1: 9}}, o); diff != "" {
		t.Errorf("Max changed the original of a clone (-want +got):\n%s", diff)
	}
	if got, want := c.String(), "t/0=7 t/1=9 t/2=1 u/0=3 "; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if _, ok := offsets.Offsets(nil).Next("t", 0); ok {
		t.Error("a nil Offsets knows a partition")
	}
}

func TestOffsetsBehind(t *testing.T) {
	held := offsets.Offsets{"a": {0: 10, 1: 7}, "b": {0: 3}}
	from := offsets.Offsets{"a": {0: 0, 1: 0, 2: 4}, "b": {0: 0}}
	want := offsets.Offsets{"a": {0: 10, 1: 9, 2: 6, 3: 5}, "b": {0: 2}}
	got := held.Behind(from, want)
	// a/0 holds all; a/1 is 2 short; a/2 holds nothing of [4,6); a/3 has no
	// start (nothing to check); b/0 holds more than was read this time.
	if diff := cmp.Diff([]offsets.Range{{Topic: "a", Partition: 1, Start: 7, End: 9}, {Topic: "a", Partition: 2, Start: 4, End: 6}}, got); diff != "" {
		t.Errorf("Behind (-want +got):\n%s", diff)
	}
	if got := want.Behind(from, want); len(got) != 0 {
		t.Errorf("want.Behind(want) = %v, want none", got)
	}
}
