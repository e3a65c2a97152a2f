package kit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareCountsLostDuplicatedAndUnexpected(t *testing.T) {
	produced := []Key{{0, 0}, {0, 1}, {1, 0}, {1, 1}}
	seen := map[Key]int{{0, 0}: 1, {0, 1}: 3, {1, 1}: 1, {2, 9}: 1}
	got := Compare(produced, seen)
	want := Tally{Produced: 4, Lost: 1, Duplicated: 2, Unexpected: 1, LostKeys: []Key{{1, 0}}, DupKeys: []Key{{0, 1}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	if got.OK() {
		t.Error("OK() with losses and duplicates")
	}
	if !Compare(produced, map[Key]int{{0, 0}: 1, {0, 1}: 1, {1, 0}: 1, {1, 1}: 1}).OK() {
		t.Error("not OK() when every record is there once")
	}
}

func TestParseExports(t *testing.T) {
	got := ParseExports("export A=1\nexport B='x?y=z'\nnoise\n")
	if diff := cmp.Diff(map[string]string{"A": "1", "B": "x?y=z"}, got); diff != "" {
		t.Errorf("ParseExports (-want +got):\n%s", diff)
	}
}
