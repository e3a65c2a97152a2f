package kafkaio

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/google/go-cmp/cmp"
)

// TestPositionTrackerSplitsAtPosition checks that, whatever fraction the
// runner asks for, a split leaves the primary exactly what was claimed and
// gives the residual the rest (docs/DESIGN.md, "Runners": Prism splits unbounded
// restrictions at fractions above 0).
func TestPositionTrackerSplitsAtPosition(t *testing.T) {
	tests := []struct {
		name         string
		r            offsetrange.Restriction
		claims       []int64
		wantPrimary  offsetrange.Restriction
		wantResidual *offsetrange.Restriction
	}{
		{"unbounded, nothing claimed", offsetrange.Restriction{Start: 5, End: unbounded}, nil,
			offsetrange.Restriction{Start: 5, End: 5}, &offsetrange.Restriction{Start: 5, End: unbounded}},
		{"unbounded, some claimed", offsetrange.Restriction{Start: 5, End: unbounded}, []int64{5, 6, 7},
			offsetrange.Restriction{Start: 5, End: 8}, &offsetrange.Restriction{Start: 8, End: unbounded}},
		{"unbounded, offsets skipped by gaps", offsetrange.Restriction{Start: 0, End: unbounded}, []int64{3, 9},
			offsetrange.Restriction{Start: 0, End: 10}, &offsetrange.Restriction{Start: 10, End: unbounded}},
		{"bounded, some claimed", offsetrange.Restriction{Start: 0, End: 100}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
			offsetrange.Restriction{Start: 0, End: 10}, &offsetrange.Restriction{Start: 10, End: 100}},
		{"bounded, all claimed", offsetrange.Restriction{Start: 0, End: 3}, []int64{0, 1, 2},
			offsetrange.Restriction{Start: 0, End: 3}, nil},
		{"empty", offsetrange.Restriction{Start: 4, End: 4}, nil,
			offsetrange.Restriction{Start: 4, End: 4}, nil},
	}
	for _, tc := range tests {
		for _, fraction := range []float64{0, 0.001, 0.5, 0.999, 1} {
			t.Run(fmt.Sprintf("%s at %v", tc.name, fraction), func(t *testing.T) {
				tr := newPositionTracker(tc.r)
				for _, c := range tc.claims {
					if !tr.TryClaim(c) {
						t.Fatalf("TryClaim(%d) = false", c)
					}
				}
				primary, residual, err := tr.TrySplit(fraction)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantPrimary, primary); diff != "" {
					t.Errorf("TrySplit(%v) primary (-want +got):\n%s", fraction, diff)
				}
				if tc.wantResidual == nil {
					if residual != nil {
						t.Errorf("TrySplit(%v) residual = %v, want none", fraction, residual)
					}
				} else if diff := cmp.Diff(*tc.wantResidual, residual); diff != "" {
					t.Errorf("TrySplit(%v) residual (-want +got):\n%s", fraction, diff)
				}
				if !tr.IsDone() {
					t.Errorf("the primary is not done after a split at the position")
				}
			})
		}
	}
}

func TestPositionTrackerClaims(t *testing.T) {
	t.Run("finishing an unbounded restriction claims End-1", func(t *testing.T) {
		tr := newPositionTracker(offsetrange.Restriction{Start: 5, End: unbounded})
		if tr.IsBounded() {
			t.Error("an unbounded restriction is bounded")
		}
		if !tr.TryClaim(int64(7)) || !tr.TryClaim(int64(unbounded-1)) {
			t.Fatal("TryClaim failed")
		}
		if !tr.IsDone() || tr.GetError() != nil {
			t.Errorf("IsDone = %v, err %v; want done", tr.IsDone(), tr.GetError())
		}
	})
	t.Run("no claim after a split", func(t *testing.T) {
		tr := newPositionTracker(offsetrange.Restriction{Start: 0, End: unbounded})
		tr.TryClaim(int64(2))
		if _, _, err := tr.TrySplit(0.7); err != nil {
			t.Fatal(err)
		}
		if !tr.IsBounded() {
			t.Error("the primary of a split is unbounded")
		}
		if tr.TryClaim(int64(3)) {
			t.Error("claimed past the split")
		}
	})
}

func TestReadFnRestrictions(t *testing.T) {
	f := &readFn{}
	g := Group{ID: 1, Parts: []Partition{{ID: 3, Start: 10, End: unbounded}, {ID: 7, Start: 4, End: unbounded}}}
	r := f.CreateInitialRestriction(g)
	if diff := cmp.Diff(groupRestriction{Parts: g.Parts}, r); diff != "" {
		t.Errorf("CreateInitialRestriction (-want +got):\n%s", diff)
	}
	if got := f.SplitRestriction(g, r); len(got) != 1 || !cmp.Equal(got[0], r) {
		t.Errorf("SplitRestriction = %v, want the restriction whole: a partition is read in order", got)
	}
	if got := f.RestrictionSize(g, r); got != 2 {
		t.Errorf("RestrictionSize(two unbounded) = %v, want 2", got)
	}
	if got := f.RestrictionSize(g, groupRestriction{Parts: []Partition{{ID: 3, Start: 10, End: 25}, {ID: 7, Start: 4, End: unbounded}}}); got != 16 {
		t.Errorf("RestrictionSize = %v, want 16", got)
	}
	rt := f.CreateTracker(r)
	rt.TryClaim(claim{Partition: 3, Offset: 12})
	if _, _, err := rt.TrySplit(0.5); err != nil {
		t.Fatal(err)
	}
	want := groupRestriction{Parts: []Partition{{ID: 3, Start: 10, End: 10}, {ID: 7, Start: 4, End: 4}}}
	if got := f.TruncateRestriction(rt, g); !cmp.Equal(got, want) {
		t.Errorf("TruncateRestriction = %v, want empty ranges %v", got, want)
	}
}

// TestGroupTrackerSplitsAtPosition: whatever fraction the runner asks for,
// a split splits every partition of the group at its position at once:
// the primary holds what each claimed, the residual the rest of each
// partition that has any left.
func TestGroupTrackerSplitsAtPosition(t *testing.T) {
	type claims map[int32][]int64
	r := func(ps ...Partition) groupRestriction { return groupRestriction{Parts: ps} }
	tests := []struct {
		name         string
		r            groupRestriction
		claims       claims
		wantPrimary  groupRestriction
		wantResidual any
	}{
		{"unbounded, nothing claimed",
			r(Partition{ID: 0, Start: 5, End: unbounded}, Partition{ID: 4, Start: 0, End: unbounded}), nil,
			r(Partition{ID: 0, Start: 5, End: 5}, Partition{ID: 4, Start: 0, End: 0}),
			r(Partition{ID: 0, Start: 5, End: unbounded}, Partition{ID: 4, Start: 0, End: unbounded})},
		{"unbounded, one partition read",
			r(Partition{ID: 0, Start: 5, End: unbounded}, Partition{ID: 4, Start: 0, End: unbounded}), claims{0: {5, 6, 7}},
			r(Partition{ID: 0, Start: 5, End: 8}, Partition{ID: 4, Start: 0, End: 0}),
			r(Partition{ID: 0, Start: 8, End: unbounded}, Partition{ID: 4, Start: 0, End: unbounded})},
		{"unbounded, both read, with gaps",
			r(Partition{ID: 0, Start: 0, End: unbounded}, Partition{ID: 4, Start: 0, End: unbounded}), claims{0: {3, 9}, 4: {0, 1}},
			r(Partition{ID: 0, Start: 0, End: 10}, Partition{ID: 4, Start: 0, End: 2}),
			r(Partition{ID: 0, Start: 10, End: unbounded}, Partition{ID: 4, Start: 2, End: unbounded})},
		{"bounded, one partition done drops out of the residual",
			r(Partition{ID: 1, Start: 0, End: 3}, Partition{ID: 2, Start: 0, End: 100}), claims{1: {0, 1, 2}, 2: {0, 1}},
			r(Partition{ID: 1, Start: 0, End: 3}, Partition{ID: 2, Start: 0, End: 2}),
			r(Partition{ID: 2, Start: 2, End: 100})},
		{"bounded, all done",
			r(Partition{ID: 1, Start: 0, End: 2}, Partition{ID: 2, Start: 5, End: 5}), claims{1: {0, 1}},
			r(Partition{ID: 1, Start: 0, End: 2}, Partition{ID: 2, Start: 5, End: 5}), nil},
	}
	for _, tc := range tests {
		for _, fraction := range []float64{0, 0.001, 0.5, 0.999, 1} {
			t.Run(fmt.Sprintf("%s at %v", tc.name, fraction), func(t *testing.T) {
				tr := newGroupTracker(tc.r)
				for _, p := range tc.r.Parts {
					for _, o := range tc.claims[p.ID] {
						if !tr.TryClaim(claim{Partition: p.ID, Offset: o}) {
							t.Fatalf("TryClaim(%d, %d) = false", p.ID, o)
						}
					}
				}
				primary, residual, err := tr.TrySplit(fraction)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantPrimary, primary); diff != "" {
					t.Errorf("TrySplit(%v) primary (-want +got):\n%s", fraction, diff)
				}
				if diff := cmp.Diff(tc.wantResidual, residual); diff != "" {
					t.Errorf("TrySplit(%v) residual (-want +got):\n%s", fraction, diff)
				}
				if !tr.IsDone() || !tr.IsBounded() {
					t.Errorf("after a split at the positions: done %v, bounded %v; want both", tr.IsDone(), tr.IsBounded())
				}
				if diff := cmp.Diff(tc.wantPrimary, tr.GetRestriction()); diff != "" {
					t.Errorf("GetRestriction after the split (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestGroupTrackerClaims(t *testing.T) {
	two := func(end int64) groupRestriction {
		return groupRestriction{Parts: []Partition{{ID: 0, Start: 0, End: end}, {ID: 1, Start: 10, End: end}}}
	}
	t.Run("bounded when every partition has an end", func(t *testing.T) {
		if newGroupTracker(two(unbounded)).IsBounded() {
			t.Error("unbounded partitions are bounded")
		}
		mixed := groupRestriction{Parts: []Partition{{ID: 0, Start: 0, End: 5}, {ID: 1, Start: 0, End: unbounded}}}
		if newGroupTracker(mixed).IsBounded() {
			t.Error("a group with one unbounded partition is bounded")
		}
		if !newGroupTracker(two(20)).IsBounded() {
			t.Error("bounded partitions are unbounded")
		}
	})
	t.Run("done when every partition is", func(t *testing.T) {
		tr := newGroupTracker(two(20))
		for _, c := range []claim{{0, 3}, {1, 12}, {0, 19}} {
			if !tr.TryClaim(c) {
				t.Fatalf("TryClaim(%v) = false", c)
			}
		}
		if tr.IsDone() {
			t.Error("done with partition 1 at 12 of 20")
		}
		if !tr.TryClaim(claim{1, 19}) {
			t.Fatal("TryClaim of partition 1's last offset = false")
		}
		if !tr.IsDone() || tr.GetError() != nil {
			t.Errorf("IsDone = %v, err %v; want done", tr.IsDone(), tr.GetError())
		}
		if done, rest := tr.GetProgress(); done != 30 || rest != 0 {
			t.Errorf("GetProgress = %v, %v; want 30 (20 and 10), 0", done, rest)
		}
	})
	t.Run("finishing unbounded partitions claims End-1", func(t *testing.T) {
		tr := newGroupTracker(two(unbounded))
		if !tr.TryClaim(claim{0, 7}) || !tr.TryClaim(claim{0, unbounded - 1}) || !tr.TryClaim(claim{1, unbounded - 1}) {
			t.Fatal("TryClaim failed")
		}
		if !tr.IsDone() || tr.GetError() != nil {
			t.Errorf("IsDone = %v, err %v; want done", tr.IsDone(), tr.GetError())
		}
	})
	t.Run("no claim of any partition after a split", func(t *testing.T) {
		tr := newGroupTracker(two(unbounded))
		tr.TryClaim(claim{0, 2})
		if _, _, err := tr.TrySplit(0.7); err != nil {
			t.Fatal(err)
		}
		if tr.TryClaim(claim{0, 3}) {
			t.Error("claimed partition 0 past the split")
		}
		if tr.TryClaim(claim{1, 10}) {
			t.Error("claimed partition 1 past the split")
		}
		if tr.GetError() != nil || !tr.IsDone() {
			t.Errorf("after refused claims: err %v, done %v; want no error, done", tr.GetError(), tr.IsDone())
		}
	})
	t.Run("bad claims are errors", func(t *testing.T) {
		for _, c := range []any{claim{Partition: 9, Offset: 1}, int64(3)} {
			tr := newGroupTracker(two(20))
			if tr.TryClaim(c) || tr.GetError() == nil {
				t.Errorf("TryClaim(%#v): no error", c)
			}
			if tr.IsDone() {
				t.Errorf("TryClaim(%#v): done after an error", c)
			}
		}
		tr := newGroupTracker(two(20))
		tr.TryClaim(claim{0, 5})
		if tr.TryClaim(claim{0, 4}) || tr.GetError() == nil {
			t.Error("a claim behind the position: no error")
		}
	})
}
