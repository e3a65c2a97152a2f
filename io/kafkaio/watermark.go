package kafkaio

import (
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
)

// Element timestamps are ingestion time, so a group's watermark is the
// time before which it will emit nothing more: the time its last call ended.
// (Each element of the read is a Group of partitions; see Group.)
//
// Prism v2.77 sets a stage's watermark from the residual of whichever SDF
// bundle finished last, with no minimum across elements (docs/DESIGN.md, "Runners"). A
// fast group would then push the watermark past records that a slower
// group emitted in a bundle still running, and a downstream window
// would drop them as late. When the worker runs inside the runner's process,
// as it does on Prism, every group therefore reports the minimum over
// all groups of the read, from a process-wide table. Runners that take
// the minimum themselves (Flink) get each group's own watermark.

// watermarks is the process-wide table: read id -> group -> watermark.
var watermarks = struct {
	sync.Mutex
	m map[string]map[int32]mtime.Time
}{m: map[string]map[int32]mtime.Time{}}

// registerGroups adds the groups of a read at the minimum time, so that
// none is missing from the minimum before its first call ends.
func registerGroups(read string, groups []Group) {
	watermarks.Lock()
	defer watermarks.Unlock()
	if watermarks.m[read] != nil {
		return
	}
	m := map[int32]mtime.Time{}
	for _, g := range groups {
		m[g.ID] = mtime.MinTimestamp
	}
	watermarks.m[read] = m
}

func setWatermark(read string, group int32, t mtime.Time) {
	watermarks.Lock()
	defer watermarks.Unlock()
	if m := watermarks.m[read]; m != nil && t > m[group] {
		m[group] = t
	}
}

func minWatermark(read string, own mtime.Time) mtime.Time {
	watermarks.Lock()
	defer watermarks.Unlock()
	for _, t := range watermarks.m[read] {
		if t < own {
			own = t
		}
	}
	return own
}

// forgetRead drops a finished read's entries.
func forgetRead(read string) {
	watermarks.Lock()
	defer watermarks.Unlock()
	delete(watermarks.m, read)
}

// watermarkEstimator is the watermark estimator of one group. Its state
// is the group's own watermark, in milliseconds.
type watermarkEstimator struct {
	state int64
	read  string // non-empty: report the minimum across the read
	group int32
}

// CurrentWatermark implements sdf.WatermarkEstimator.
func (e *watermarkEstimator) CurrentWatermark() time.Time {
	own := mtime.Time(e.state)
	if e.read != "" {
		own = minWatermark(e.read, own)
	}
	return own.ToTime()
}

// advance moves the group's own watermark to t. It does not publish t
// to the table (see publish).
func (e *watermarkEstimator) advance(t mtime.Time) {
	if int64(t) > e.state {
		e.state = int64(t)
	}
}

// publish raises the group's entry in the process-wide table to t. t
// must not be later than any record of the group that the runner has
// not committed yet: records a call emits reach the runner only when its
// bundle ends, after the call returns, and meanwhile another group's
// bundle may end and report the minimum. So a call publishes the time of
// its first record, and the next call, which the runner starts only after
// it committed the previous bundle, publishes the previous call's end.
func (e *watermarkEstimator) publish(t mtime.Time) {
	if e.read != "" {
		setWatermark(e.read, e.group, t)
	}
}
