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
	p := Partition{ID: 3, Start: 10, End: unbounded}
	r := f.CreateInitialRestriction(p)
	if diff := cmp.Diff(offsetrange.Restriction{Start: 10, End: unbounded}, r); diff != "" {
		t.Errorf("CreateInitialRestriction (-want +got):\n%s", diff)
	}
	if got := f.SplitRestriction(p, r); len(got) != 1 || got[0] != r {
		t.Errorf("SplitRestriction = %v, want the restriction whole: a partition is read in order", got)
	}
	if got := f.RestrictionSize(p, r); got != 1 {
		t.Errorf("RestrictionSize(unbounded) = %v, want 1", got)
	}
	if got := f.RestrictionSize(p, offsetrange.Restriction{Start: 10, End: 25}); got != 15 {
		t.Errorf("RestrictionSize = %v, want 15", got)
	}
	rt := f.CreateTracker(offsetrange.Restriction{Start: 10, End: unbounded})
	rt.TryClaim(int64(12))
	if _, _, err := rt.TrySplit(0.5); err != nil {
		t.Fatal(err)
	}
	if got := f.TruncateRestriction(rt, p); got != (offsetrange.Restriction{Start: 10, End: 10}) {
		t.Errorf("TruncateRestriction = %v, want an empty restriction", got)
	}
}
