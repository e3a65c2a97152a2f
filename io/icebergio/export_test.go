package icebergio

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/iceberg-go/catalog"
)

// This file exposes internals to the external tests (package
// icebergio_test), which use testing/icebergtest and so cannot live in
// package icebergio.

// Committer is the committer of one table.
type Committer = committer

// NewCommitter returns the committer of table ident for pipeline, with
// short retry waits. before, when not nil, runs before each snapshot is
// committed.
func NewCommitter(cat catalog.Catalog, ident, pipeline string, start Offsets, before func(WindowFiles) error) *Committer {
	return &committer{cat: cat, ident: ident, pipeline: pipeline, start: start,
		backoff: Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond}, beforeCommit: before}
}

// Process is committer.process.
func (c *committer) Process(ctx context.Context, pending []WindowFiles, running Offsets) ([]WindowFiles, Offsets, []Commit, error) {
	return c.process(ctx, pending, running)
}

// CommitWindow is committer.commit.
func (c *committer) CommitWindow(ctx context.Context, w WindowFiles, next Offsets) (int64, bool, error) {
	return c.commit(ctx, w, next)
}

// WriteWindow runs the real writer over batches, as one bundle of the
// window [end-interval, end), then merges its output the way the committer
// receives it. It returns false when the writer emitted nothing (every
// batch was already in the table).
func WriteWindow(ctx context.Context, cfg CatalogConfig, ident, pipeline string, end time.Time, interval time.Duration, batches ...Batch) (WindowFiles, bool, error) {
	f := &writeFn{Catalog: cfg, Ident: ident, Pipeline: pipeline}
	if err := f.Setup(ctx); err != nil {
		return WindowFiles{}, false, err
	}
	defer f.Teardown()
	w := window.IntervalWindow{Start: mtime.FromTime(end.Add(-interval)), End: mtime.FromTime(end)}
	var sets []FileSet
	emit := func(_ beam.EventTime, fs FileSet) { sets = append(sets, fs) }
	f.StartBundle(ctx, emit)
	for _, b := range batches {
		if err := f.ProcessElement(ctx, w, w.Start, b, emit); err != nil {
			return WindowFiles{}, false, err
		}
	}
	if err := f.FinishBundle(ctx, emit); err != nil {
		return WindowFiles{}, false, err
	}
	if len(sets) == 0 {
		return WindowFiles{}, false, nil
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
	var out WindowFiles
	mergeFn{}.ProcessElement(w, ident, next, func(_ string, wf WindowFiles) { out = wf })
	return out, true, nil
}

// SetOpen makes the committer open its catalog again with open after a
// failure.
func (c *committer) SetOpen(open func(context.Context) (catalog.Catalog, error)) { c.open = open }
