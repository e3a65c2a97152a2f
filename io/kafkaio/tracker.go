package kafkaio

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
)

// positionTracker is an offset-range tracker that splits only at the
// current position, whatever fraction the runner asks for.
//
// Prism splits [start, MaxInt64) restrictions at fractions above 0; the
// residual then starts near 2^62 and the read fails (docs/DESIGN.md, "Runners"). A Kafka
// partition cannot be read from the middle of its future anyway: the only
// useful split is "what is read so far" and "the rest".
type positionTracker struct {
	*offsetrange.Tracker
}

func newPositionTracker(r offsetrange.Restriction) *positionTracker {
	return &positionTracker{offsetrange.NewTracker(r)}
}

// TrySplit splits at the position after the last claimed offset.
func (t *positionTracker) TrySplit(float64) (primary, residual any, err error) {
	return t.Tracker.TrySplit(0)
}

// IsBounded reports whether the restriction has an end.
func (t *positionTracker) IsBounded() bool {
	return t.GetRestriction().(offsetrange.Restriction).End != unbounded
}

// groupRestriction is the restriction of a Group: one offset range per
// partition, in the group's partition order. A partition whose range is
// read to its end drops out of the residual of a split.
type groupRestriction struct {
	Parts []Partition
}

// bounded reports whether every partition of r has an end.
func (r groupRestriction) bounded() bool {
	for _, p := range r.Parts {
		if p.End == unbounded {
			return false
		}
	}
	return true
}

// empty reports whether no partition of r has an offset left to read.
func (r groupRestriction) empty() bool {
	for _, p := range r.Parts {
		if p.Start < p.End {
			return false
		}
	}
	return true
}

// claim is a position of a groupTracker: an offset of one partition.
type claim struct {
	Partition int32
	Offset    int64
}

// groupTracker tracks a groupRestriction with a positionTracker per
// partition. It claims offsets of each partition in order, and splits
// every partition at its current position at once: the primary keeps what
// each partition claimed, the residual has the rest of every partition
// that has any left. A runner's split, whatever its fraction, and a
// self-checkpoint are then the same: what is read, and what is not.
type groupTracker struct {
	ids    []int32
	parts  []*positionTracker
	index  map[int32]int
	err    error
	closed bool // a claim failed: the restriction was split
}

func newGroupTracker(r groupRestriction) *groupTracker {
	t := &groupTracker{index: make(map[int32]int, len(r.Parts))}
	for i, p := range r.Parts {
		t.ids = append(t.ids, p.ID)
		t.parts = append(t.parts, newPositionTracker(offsetrange.Restriction{Start: p.Start, End: p.End}))
		t.index[p.ID] = i
	}
	return t
}

// TryClaim claims pos, a claim: an offset of one of the group's partitions.
// It returns false when the offset is past its partition's range (the
// restriction was split there, or the offset is the partition's end), and
// then claims nothing more of any partition.
func (t *groupTracker) TryClaim(pos any) bool {
	c, ok := pos.(claim)
	if !ok {
		t.err = fmt.Errorf("kafkaio: claim of %T, want a claim", pos)
		return false
	}
	if t.closed {
		return false
	}
	i, ok := t.index[c.Partition]
	if !ok {
		t.err = fmt.Errorf("kafkaio: claim of partition %d, which is not in the group %v", c.Partition, t.ids)
		return false
	}
	if t.parts[i].TryClaim(c.Offset) {
		return true
	}
	t.closed = true
	if err := t.parts[i].GetError(); err != nil {
		t.err = fmt.Errorf("partition %d: %w", c.Partition, err)
	}
	return false
}

// GetError returns the error of a bad claim, if any.
func (t *groupTracker) GetError() error { return t.err }

// TrySplit splits every partition at its current position, whatever
// fraction the runner asks for. The residual is nil when no partition has
// anything left.
func (t *groupTracker) TrySplit(float64) (primary, residual any, err error) {
	var p, r groupRestriction
	for i, pt := range t.parts {
		prim, res, err := pt.TrySplit(0)
		if err != nil {
			return nil, nil, err
		}
		pr := prim.(offsetrange.Restriction)
		p.Parts = append(p.Parts, Partition{ID: t.ids[i], Start: pr.Start, End: pr.End})
		if res != nil {
			rr := res.(offsetrange.Restriction)
			r.Parts = append(r.Parts, Partition{ID: t.ids[i], Start: rr.Start, End: rr.End})
		}
	}
	if len(r.Parts) == 0 {
		return p, nil, nil
	}
	return p, r, nil
}

// GetProgress sums the progress of the partitions.
func (t *groupTracker) GetProgress() (done, remaining float64) {
	for _, pt := range t.parts {
		d, r := pt.GetProgress()
		done, remaining = done+d, remaining+r
	}
	return done, remaining
}

// IsDone reports whether every partition is done.
func (t *groupTracker) IsDone() bool {
	if t.err != nil {
		return false
	}
	for _, pt := range t.parts {
		if !pt.IsDone() {
			return false
		}
	}
	return true
}

// GetRestriction returns the current restriction: each partition's range,
// narrowed by a split.
func (t *groupTracker) GetRestriction() any {
	var r groupRestriction
	for i, pt := range t.parts {
		pr := pt.GetRestriction().(offsetrange.Restriction)
		r.Parts = append(r.Parts, Partition{ID: t.ids[i], Start: pr.Start, End: pr.End})
	}
	return r
}

// IsBounded reports whether every partition has an end.
func (t *groupTracker) IsBounded() bool {
	return t.GetRestriction().(groupRestriction).bounded()
}
