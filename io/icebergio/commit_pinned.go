package icebergio

import (
	"context"
	"errors"
	iofs "io/fs"
	"log/slog"

	"github.com/apache/iceberg-go/table"
)

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
