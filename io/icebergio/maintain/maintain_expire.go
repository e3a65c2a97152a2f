package maintain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/haade/haade/io/icebergio"

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
	// Readers maps each downstream "table/pipeline" that reads this table
	// by snapshot (ReadSnapshots) to the sequence number it reads next;
	// every snapshot from there on is kept.
	Readers  map[string]int64
	Attempts int // commits tried (more than 1 after conflicts)
}

// ExpireSnapshots removes the snapshots of table ident that are older than
// olderThan, always keeping the retainLast newest and, for each pipeline,
// the newest snapshot that carries its offsets together with every
// snapshot after it: icebergio.CommittedOffsets walks back from the current snapshot
// and stops at the first one missing. It also keeps every snapshot that a
// downstream pipeline reading this table by snapshot has not read yet (the
// position another table of the catalog records for icebergio.SourceTopic(ident)),
// since an expired append snapshot's rows never reach it. Data and
// manifest files that only expired snapshots referenced are deleted after
// the commit. A conflict reloads and redoes it.
func ExpireSnapshots(ctx context.Context, cat catalog.Catalog, ident string, olderThan time.Duration, retainLast int, b icebergio.Backoff) (ExpireReport, error) {
	if retainLast < 1 {
		retainLast = 1
	}
	var rep ExpireReport
	// Readers only move forward: positions read once, now, keep enough.
	readers, err := readersOf(ctx, cat, ident)
	if err != nil {
		return rep, err
	}
	rep.Readers = readers
	err = icebergio.Retry(ctx, b, "expire snapshots", ident, func() error {
		rep.Attempts++
		cur, err := loadExisting(ctx, cat, ident)
		if err != nil {
			return err
		}
		rep.Before, rep.After = snapshotCount(cur), snapshotCount(cur)
		rep.Retained, rep.Checkpoints = retention(cur, retainLast, readers)
		if cur.CurrentSnapshot() == nil {
			return nil
		}
		tx := cur.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return err
		}
		if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(rep.Retained)); err != nil {
			return icebergio.Permanent(err) // e.g. gc.enabled=false
		}
		if err := checkOffsetsKept(cur, tx); err != nil {
			return icebergio.Permanent(err)
		}
		nt, err := icebergio.CommitPinned(ctx, ident, tx)
		if err != nil {
			return err
		}
		rep.After = snapshotCount(nt)
		return nil
	})
	return rep, err
}

// retention returns how many of the newest ancestors of the current
// snapshot to keep: at least retainLast, down to the newest snapshot of
// each pipeline that carries offsets, and down to the oldest that a reader
// has yet to read. It also returns the pipelines' snapshots.
func retention(tbl *table.Table, retainLast int, readers map[string]int64) (int, map[string]int64) {
	keep, checkpoints := retainLast, map[string]int64{}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return keep, checkpoints
	}
	unread := int64(math.MaxInt64)
	for _, next := range readers {
		unread = min(unread, next)
	}
	for i, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.SequenceNumber >= unread {
			keep = max(keep, i+1)
		}
		if s.Summary == nil {
			continue
		}
		p := s.Summary.Properties[icebergio.SummaryPipeline]
		if p == "" || s.Summary.Properties[icebergio.SummaryOffsets] == "" {
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

// readersOf finds the pipelines that read table ident by snapshot: tables
// of the catalog whose committed offsets hold icebergio.SourceTopic(ident). It maps
// "table/pipeline" to the next sequence number each will read.
func readersOf(ctx context.Context, cat catalog.Catalog, ident string) (map[string]int64, error) {
	topic := icebergio.SourceTopic(ident)
	out := map[string]int64{}
	nss, err := icebergio.Namespaces(ctx, cat)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		for id, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, fmt.Errorf("%w: list tables of %s: %v", icebergio.ErrCatalog, strings.Join(ns, "."), err)
			}
			name := strings.Join(id, ".")
			if name == ident {
				continue
			}
			tbl, err := cat.LoadTable(ctx, id)
			if errors.Is(err, catalog.ErrNoSuchTable) {
				continue // dropped meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("%w: load table %s: %v", icebergio.ErrCatalog, name, err)
			}
			all, err := icebergio.AllCommittedOffsets(tbl)
			if err != nil {
				return nil, err
			}
			for p, o := range all {
				if next, ok := o.Next(topic, 0); ok {
					out[name+"/"+p] = next
				}
			}
		}
	}
	return out, nil
}
