package icebergio

import (
	"context"

	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio/rows"
)

// ScanRows reads every row of a table's current snapshot into *rows, a
// pointer to a slice of a row struct (see SchemaOf). Columns are matched by
// name; table columns the struct lacks are skipped. It reads the whole
// table into memory: it is for tests, tools and small tables. It opens cfg
// and loads ident, then calls rows.ScanTable.
func ScanRows(ctx context.Context, cfg CatalogConfig, ident string, out any, opts ...table.ScanOption) error {
	cat, err := cfg.Open(ctx)
	if err != nil {
		return err
	}
	defer CloseCatalog(cat)
	tbl, err := LoadTable(ctx, cat, ident)
	if err != nil {
		return err
	}
	return rows.ScanTable(ctx, tbl, out, opts...)
}
