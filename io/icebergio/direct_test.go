package icebergio

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/transforms/offsets"
)

// WriteWindow runs Write's writer over batches, as one bundle of the
// window [end-interval, end), then merges its output the way the committer
// receives it. It returns false when the writer emitted nothing (every
// batch was already in the table). With CommitWindows it is Write without
// Beam, one window at a time: for the tests that drive the real write path
// step by step, this package's and io/icebergio/maintain's (which live here,
// in package icebergio_test, to use them).
func WriteWindow(ctx context.Context, cfg CatalogConfig, ident, pipeline string, end time.Time, interval time.Duration, batches ...Batch) (FileSet, bool, error) {
	f := &writeFn{Catalog: cfg, Ident: ident, Pipeline: pipeline}
	if err := f.Setup(ctx); err != nil {
		return FileSet{}, false, err
	}
	defer f.Teardown()
	w := window.IntervalWindow{Start: mtime.FromTime(end.Add(-interval)), End: mtime.FromTime(end)}
	var sets []FileSet
	emit := func(_ beam.EventTime, fs FileSet) { sets = append(sets, fs) }
	f.StartBundle(ctx, emit)
	for _, b := range batches {
		if err := f.ProcessElement(ctx, w, w.Start, b, emit); err != nil {
			return FileSet{}, false, err
		}
	}
	if err := f.FinishBundle(ctx, emit); err != nil {
		return FileSet{}, false, err
	}
	if len(sets) == 0 {
		return FileSet{}, false, nil
	}
	i := 0
	next := func(fs *FileSet) bool {
		if i == len(sets) {
			return false
		}
		*fs = sets[i]
		i++
		return true
	}
	var out FileSet
	mergeFn{}.ProcessElement(w, ident, next, func(_ string, wf FileSet) { out = wf })
	return out, true, nil
}

// CommitWindows commits the pending windows of table ident (from
// WriteWindow) with Write's committer for pipeline, as Write's commit step
// does: in window order, each only when it continues the offsets that
// running (the offsets the caller's previous commits reached; empty at
// first) and the table hold, retrying conflicts as b says. It returns the
// windows still waiting, the new running offsets and the commits made.
func CommitWindows(ctx context.Context, cat catalog.Catalog, ident, pipeline string, b Backoff, pending []FileSet, running offsets.Offsets) ([]FileSet, offsets.Offsets, []Commit, error) {
	c := &committer{cat: cat, ident: ident, pipeline: pipeline, start: offsets.Offsets{}, backoff: b}
	return c.process(ctx, pending, running)
}
