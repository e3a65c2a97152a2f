package icebergio

import (
	"errors"
	"testing"

	"github.com/haade/haade/transforms/offsets"
)

func rng(p int32, start, end int64) offsets.Range {
	return offsets.Range{Topic: "t", Partition: p, Start: start, End: end}
}

func TestClassify(t *testing.T) {
	running := offsets.Offsets{"t": {0: 10, 1: 20}}
	start := offsets.Offsets{"t": {2: 100}} // where the read began for a partition the table does not know
	tests := []struct {
		name    string
		ranges  []offsets.Range
		want    windowState
		overlap bool // want ErrOffsetsOverlap
	}{
		{"continues one partition", []offsets.Range{rng(0, 10, 15)}, windowReady, false},
		{"continues two partitions", []offsets.Range{rng(0, 10, 15), rng(1, 20, 21)}, windowReady, false},
		{"ranges that tile, out of order", []offsets.Range{rng(0, 12, 15), rng(0, 10, 12)}, windowReady, false},
		{"unknown partition at its start", []offsets.Range{rng(2, 100, 110)}, windowReady, false},
		{"partition unknown everywhere", []offsets.Range{rng(3, 7, 9)}, windowReady, false},
		{"wholly in the table", []offsets.Range{rng(0, 0, 10)}, windowDuplicate, false},
		{"wholly in the table, two partitions", []offsets.Range{rng(0, 5, 10), rng(1, 0, 20)}, windowDuplicate, false},
		{"unknown partition before its start", []offsets.Range{rng(2, 50, 100)}, windowDuplicate, false},
		{"no ranges", nil, windowDuplicate, false},
		{"an earlier window is missing", []offsets.Range{rng(0, 15, 20)}, windowWaiting, false},
		{"one partition waits", []offsets.Range{rng(0, 10, 15), rng(1, 25, 30)}, windowWaiting, false},
		{"unknown partition after its start", []offsets.Range{rng(2, 110, 120)}, windowWaiting, false},
		{"straddles the table's offset", []offsets.Range{rng(0, 5, 15)}, 0, true},
		{"a hole inside the window", []offsets.Range{rng(0, 10, 12), rng(0, 13, 15)}, 0, true},
		{"ranges overlap inside the window", []offsets.Range{rng(0, 10, 13), rng(0, 12, 15)}, 0, true},
		{"partly in the table", []offsets.Range{rng(0, 0, 10), rng(1, 20, 25)}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := FileSet{Table: "ns.t", WindowEnd: 1_000, Ranges: tc.ranges}
			got, err := classify(w, running, start)
			if tc.overlap {
				if !errors.Is(err, ErrOffsetsOverlap) {
					t.Fatalf("classify = %v, %v; want ErrOffsetsOverlap", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("classify = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
