package kafkaio

import (
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
