package main

import (
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
)

// lineageOf names the datasets of a run of gold: its input the silver
// table, its outputs the two gold tables.
func lineageOf(cfg Config, lin *lineage.Command) {
	lin.InputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Source)
	lin.OutputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.DailyTable, cfg.TermsTable)
}
