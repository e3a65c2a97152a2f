package icebergio

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// createError is the sentinel for a table that the catalog could not
// create: ErrWarehouse when the table's first metadata file could not be
// written (a file system or object storage error), else ErrCatalog. The
// catalog answered in both cases; blaming its URI for an unwritable
// warehouse sent users to the wrong flag.
func createError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return ErrWarehouse
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"permission denied", "read-only file system", "not a directory", "no space left",
		"accessdenied", "access denied", "nosuchbucket", "invalidaccesskeyid", "signaturedoesnotmatch", "forbidden",
		"failed to write", "metadata.json"} {
		if strings.Contains(msg, s) {
			return ErrWarehouse
		}
	}
	return ErrCatalog
}

// isBusy reports whether err is SQLite's "database is locked" (SQLITE_BUSY)
// or "database table is locked" (SQLITE_LOCKED): another process holds the
// catalog file.
func isBusy(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") ||
		strings.Contains(msg, "database table is locked")
}

// IsConflict reports whether a commit failed because the table changed
// since it was loaded: the SQL catalog says "requirement failed: branch
// main has changed", or wraps table.ErrCommitFailed when it lost the race.
// The string stays: iceberg-go v0.7.0's requirement checks
// (table/requirements.go) return plain errors that errors.Is cannot see.
func IsConflict(err error) bool {
	return err != nil && (errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "has changed"))
}
