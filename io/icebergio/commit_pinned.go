package icebergio

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"

	"github.com/apache/iceberg-go/table"
)

// pinned starts a transaction on tbl that is pinned to tbl's current
// snapshot (AssertRefSnapshotID on main): if another writer commits first,
// the commit fails with a conflict instead of being replayed on the new head.
//
// iceberg-go replays a conflicting transaction on the new head when the
// table's commit.retry.num-retries is above 0 (iceberg-go's default is 0,
// Java Iceberg's 4; Spark's and Trino's users set the property on the
// table for their own writers) and the catalog reports the
// conflict as ErrCommitFailed (a REST catalog's 409, the SQL catalog's row
// race). A replay skips the checks made against the table this transaction
// was built on: the append of a window that another attempt has just
// committed would go in twice, and a progress property would move back.
// Every commit of the write path therefore goes through pinned, and a
// conflict comes back to the caller, which reloads and checks again.
func pinned(tbl *table.Table) (*table.Transaction, error) {
	tx := tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, Permanent(fmt.Errorf("icebergio: pin the commit to the current snapshot of %v: %w", tbl.Identifier(), err))
	}
	return tx, nil
}

// CommitPinned commits tx, which must have been pinned to its base with
// AssertRefSnapshotID, counting conflicts. An error after the catalog took
// the commit (iceberg-go's post-commit file deletion, which fails on a file
// already gone) is logged, not returned: the commit must not be redone. Maintenance commits this way.
func CommitPinned(ctx context.Context, ident string, tx *table.Transaction) (*table.Table, error) {
	nt, err := tx.Commit(ctx)
	if err != nil && nt != nil {
		if !onlyNotExist(err) {
			slog.Warn("committed, but some files were not deleted; orphan cleanup will", "table", ident, "err", err)
		}
		return nt, nil
	}
	if IsConflict(err) {
		commitConflicts.WithLabelValues(ident).Inc()
	}
	return nt, err
}

// onlyNotExist reports whether every error joined in err says a file does
// not exist.
func onlyNotExist(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != nil && !onlyNotExist(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, iofs.ErrNotExist)
}
