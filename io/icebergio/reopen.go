package icebergio

import (
	"context"
	"log/slog"

	"github.com/apache/iceberg-go/table"
)

// loadTable loads the committer's table, first opening the catalog again
// when the last call failed. A catalog keeps a pool of connections; one
// that failed may fail for ever (a SQLite file opened while read-only stays
// read-only on that connection; a proxy that dropped it), so retrying on it
// is waiting for nothing. A failed load marks the catalog stale too.
func (c *committer) LoadTable(ctx context.Context) (*table.Table, error) {
	if c.stale && c.open != nil {
		cat, err := c.open(ctx)
		if err != nil {
			return nil, err
		}
		CloseCatalog(c.cat)
		c.cat, c.stale = cat, false
		slog.Info("reopened the catalog after a failure", "table", c.ident)
	}
	tbl, err := LoadTable(ctx, c.cat, c.ident)
	if err != nil {
		c.stale = true
	}
	return tbl, err
}
