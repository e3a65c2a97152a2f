package kafkaio

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
)

func TestWatermarkMinimumAcrossGroups(t *testing.T) {
	const read = "TestWatermarkMinimumAcrossGroups"
	registerGroups(read, []Group{{ID: 0}, {ID: 1}, {ID: 2}})
	t.Cleanup(func() { forgetRead(read) })
	est := func(p int32) *watermarkEstimator {
		return &watermarkEstimator{state: int64(mtime.MinTimestamp), read: read, group: p}
	}
	e0, e1, e2 := est(0), est(1), est(2)
	wm := func(e *watermarkEstimator) mtime.Time { return mtime.FromTime(e.CurrentWatermark()) }

	e0.advance(1000)
	if got := wm(e0); got != mtime.MinTimestamp {
		t.Errorf("watermark %v after advance alone, want the minimum time: advance must not publish", got)
	}
	// A call's end: its own watermark, and what it may publish.
	end := func(e *watermarkEstimator, t mtime.Time) { e.advance(t); e.publish(t) }
	e0.publish(1000)
	end(e1, 400)
	if got := wm(e0); got != mtime.MinTimestamp {
		t.Errorf("watermark %v while group 2 has not published, want the minimum time", got)
	}
	end(e2, 700)
	for i, e := range []*watermarkEstimator{e0, e1, e2} {
		if got := wm(e); got != 400 {
			t.Errorf("group %d reports %v, want 400, the slowest group's", i, got)
		}
	}
	e1.publish(200) // backwards: ignored
	if got := wm(e0); got != 400 {
		t.Errorf("after a step back: watermark %v, want 400", got)
	}
	end(e1, mtime.MaxTimestamp) // group 1 is done
	if got := wm(e0); got != 700 {
		t.Errorf("watermark %v, want 700", got)
	}
	end(e0, mtime.MaxTimestamp)
	e2.publish(mtime.MaxTimestamp)
	if got := wm(e2); got != 700 {
		t.Errorf("watermark %v of group 2, want its own 700", got)
	}
	e2.advance(mtime.MaxTimestamp)
	if got := wm(e2); got != mtime.MaxTimestamp {
		t.Errorf("watermark %v after every group is done, want the end of time", got)
	}

	registerGroups(read, []Group{{ID: 0}}) // a second registration keeps the table
	if got := wm(e2); got != mtime.MaxTimestamp {
		t.Errorf("watermark %v after a second registration, want the end of time", got)
	}
	forgetRead(read)
	if got := wm(&watermarkEstimator{state: 5, read: read}); got != 5 {
		t.Errorf("watermark %v of a forgotten read, want its own 5", got)
	}
}

func TestWatermarkNotShared(t *testing.T) {
	// A worker in another process (Flink) has no table: each group
	// reports its own watermark.
	e := &watermarkEstimator{state: int64(mtime.MinTimestamp)}
	e.advance(300)
	e.publish(400) // no table: nothing to publish to
	if got := mtime.FromTime(e.CurrentWatermark()); got != 300 {
		t.Errorf("watermark %v, want 300", got)
	}
}
