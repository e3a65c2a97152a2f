package icebergio

import (
	"context"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ExpireReport is what ExpireSnapshots did.
type ExpireReport struct {
	Before, After int // snapshots in the metadata before and after
	// Retained is how many of the newest ancestors of the current snapshot
	// were kept whatever their age: RetainLast, or more to reach the newest
	// snapshot carrying each pipeline's offsets.
	Retained int
	// Checkpoints maps each pipeline to the snapshot whose offsets it
	// resumes from, all kept.
	Checkpoints map[string]int64
	Attempts    int // commits tried (more than 1 after conflicts)
}

// ExpireSnapshots removes the snapshots of table ident that are older than
// olderThan, always keeping the retainLast newest and, for each pipeline,
// the newest snapshot that carries its offsets together with every
// snapshot after it: CommittedOffsets walks back from the current snapshot
// and stops at the first one missing. Data and manifest files that only
// expired snapshots referenced are deleted after the commit. A conflict
// reloads and redoes it.
func ExpireSnapshots(ctx context.Context, cat catalog.Catalog, ident string, olderThan time.Duration, retainLast int, b Backoff) (ExpireReport, error) {
	if retainLast < 1 {
		retainLast = 1
	}
	var rep ExpireReport
	err := retry(ctx, b, "expire snapshots", ident, func() error {
		rep.Attempts++
		cur, err := loadExisting(ctx, cat, ident)
		if err != nil {
			return err
		}
		rep.Before, rep.After = snapshotCount(cur), snapshotCount(cur)
		rep.Retained, rep.Checkpoints = retention(cur, retainLast)
		if cur.CurrentSnapshot() == nil {
			return nil
		}
		tx := cur.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return err
		}
		if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(rep.Retained)); err != nil {
			return permanent(err) // e.g. gc.enabled=false
		}
		if err := checkOffsetsKept(cur, tx); err != nil {
			return permanent(err)
		}
		nt, err := commitPinned(ctx, ident, tx)
		if err != nil {
			return err
		}
		rep.After = snapshotCount(nt)
		return nil
	})
	return rep, err
}

// retention returns how many of the newest ancestors of the current
// snapshot to keep: at least retainLast, and down to the newest snapshot
// of each pipeline that carries offsets. It also returns those snapshots.
func retention(tbl *table.Table, retainLast int) (int, map[string]int64) {
	keep, checkpoints := retainLast, map[string]int64{}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return keep, checkpoints
	}
	for i, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.Summary == nil {
			continue
		}
		p := s.Summary.Properties[SummaryPipeline]
		if p == "" || s.Summary.Properties[SummaryOffsets] == "" {
			continue
		}
		if _, ok := checkpoints[p]; ok {
			continue
		}
		checkpoints[p] = s.SnapshotID
		keep = max(keep, i+1)
	}
	return keep, checkpoints
}
