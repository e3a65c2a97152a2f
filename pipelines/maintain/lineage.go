package main

import (
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
)

// newLineage opens --lineage for a maintenance run: job "maintain", the
// tables both read and rewritten; COMPLETE lists the snapshots maintenance
// made (compactions, manifest rewrites; expiry and orphan removal make
// none).
func newLineage(cfg Config, getenv func(string) string) (*lineage.Command, error) {
	em, err := lineage.Open(cfg.Lineage, lineage.APIKey(getenv(lineage.EnvAPIKey)))
	if err != nil {
		return nil, err
	}
	return &lineage.Command{
		Emitter:      em,
		Job:          lineage.Job{Name: "maintain"},
		InputTables:  icetables.Of(cfg.Catalog, "", cfg.Tables...),
		OutputTables: icetables.Maintained(cfg.Catalog, cfg.Tables...),
	}, nil
}
