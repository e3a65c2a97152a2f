package main

import "github.com/haade/haade/runners/lineage"

// newLineage opens --lineage for a run of gold: its job is the pipeline id,
// its input the silver table, its outputs the two gold tables.
func newLineage(cfg Config, getenv func(string) string) (*lineage.Command, error) {
	em, err := lineage.Open(cfg.Lineage, lineage.APIKey(getenv(lineage.EnvAPIKey)))
	if err != nil {
		return nil, err
	}
	return &lineage.Command{
		Emitter:      em,
		Job:          lineage.Job{Name: cfg.Pipeline, Runner: cfg.Runner},
		InputTables:  lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.Source),
		OutputTables: lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.DailyTable, cfg.TermsTable),
	}, nil
}
