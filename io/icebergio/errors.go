package icebergio

import (
	"errors"
	"fmt"

	"github.com/haade/haade/io/icebergio/rows"
)

// Errors returned by this package. Narrower errors wrap these with %w.
var (
	// ErrRowType is returned when a Go row type cannot be mapped to a table:
	// an untagged struct, an unsupported field type, a bad tag. It is
	// rows.ErrRowType.
	ErrRowType = rows.ErrRowType

	// ErrIncompatibleSchema is returned at start when an existing table's
	// schema cannot take the pipeline's rows.
	// It is rows.ErrIncompatibleSchema.
	ErrIncompatibleSchema = rows.ErrIncompatibleSchema

	// ErrCatalog is returned when the catalog cannot be opened or reached.
	ErrCatalog = errors.New("icebergio: catalog")

	// ErrWarehouse is returned when the catalog answers but the table's
	// files cannot be written under the warehouse: a directory that is not
	// writable, a bucket the credentials may not write.
	ErrWarehouse = errors.New("icebergio: warehouse not writable")

	// ErrCatalogBusy is returned when a SQLite catalog stays locked by
	// another process (SQLITE_BUSY) for longer than Open waits
	// (CatalogBusyWait). It wraps ErrCatalog.
	ErrCatalogBusy = fmt.Errorf("%w busy", ErrCatalog)

	// ErrOffsetsOverlap is returned by the committer when a window covers
	// offsets that the table already holds only in part: a broken invariant,
	// never a transient condition.
	ErrOffsetsOverlap = errors.New("icebergio: window overlaps committed offsets")

	// ErrLostRows is returned when rows reach the committer without the
	// data files that hold them: their offsets are never committed.
	ErrLostRows = errors.New("icebergio: rows without data files")

	// ErrBadSummary is returned when a snapshot's haade summary cannot be decoded.
	ErrBadSummary = errors.New("icebergio: bad snapshot summary")
)
