package icebergio

import "github.com/haade/haade/transforms/tables"

// TableOf is the Table to Open for a table of the table layer: its
// identifier, row type, partition spec and properties (over
// DefaultProperties).
//
//	sink, err := icebergio.Open(ctx, cat, icebergio.TableOf(tables.Bronze.As(cfg.Table)), cfg.Pipeline)
func TableOf(t tables.Table) Table {
	return Table{Ident: t.Ident, Row: t.Row, Partition: t.Partition, Properties: t.Properties}
}
