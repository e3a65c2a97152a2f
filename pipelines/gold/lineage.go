package main

import "github.com/haade/haade/runners/lineage"

// lineageOf names the datasets of a run of gold: its input the silver
// table, its outputs the two gold tables.
func lineageOf(cfg Config, lin *lineage.Command) {
	lin.InputTables = lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.Source)
	lin.OutputTables = lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.DailyTable, cfg.TermsTable)
}
