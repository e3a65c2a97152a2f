package main

import (
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
)

// lineageOf names the datasets of a run of silver: its input the bronze
// table, its outputs silver and its rejects.
func lineageOf(cfg Config, lin *lineage.Command) {
	lin.InputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Source)
	lin.OutputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Table, cfg.Rejects)
}
