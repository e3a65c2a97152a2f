package icebergio

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/transforms/offsets"
)

// This file exposes internals to the external tests (package
// icebergio_test), which use testing/icebergtest and so cannot live in
// package icebergio.

// Committer is the committer of one table.
type Committer = committer

// NewCommitter returns the committer of table ident for pipeline, with
// short retry waits. before, when not nil, runs before each snapshot is
// committed.
func NewCommitter(cat catalog.Catalog, ident, pipeline string, start offsets.Offsets, before func(FileSet) error) *Committer {
	return &committer{cat: cat, ident: ident, pipeline: pipeline, start: start,
		backoff: Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond}, beforeCommit: before}
}

// Process is committer.process.
func (c *committer) Process(ctx context.Context, pending []FileSet, running offsets.Offsets) ([]FileSet, offsets.Offsets, []Commit, error) {
	return c.process(ctx, pending, running)
}

// CommitWindow is committer.commit.
func (c *committer) CommitWindow(ctx context.Context, w FileSet, next offsets.Offsets) (int64, bool, error) {
	return c.commit(ctx, w, next)
}

// SetOpen makes the committer open its catalog again with open after a
// failure.
func (c *committer) SetOpen(open func(context.Context) (catalog.Catalog, error)) { c.open = open }
