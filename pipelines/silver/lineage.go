package main

import "github.com/haade/haade/runners/lineage"

// newLineage opens --lineage for a run of silver: its job is the pipeline
// id, its input the bronze table, its outputs silver and its rejects.
func newLineage(cfg Config, getenv func(string) string) (*lineage.Command, error) {
	em, err := lineage.Open(cfg.Lineage, lineage.APIKey(getenv(lineage.EnvAPIKey)))
	if err != nil {
		return nil, err
	}
	return &lineage.Command{
		Emitter:      em,
		Job:          lineage.Job{Name: cfg.Pipeline, Streaming: !cfg.Bounded, Runner: cfg.Runner},
		InputTables:  lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.Source),
		OutputTables: lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.Table, cfg.Rejects),
	}, nil
}
