package main

import (
	"flag"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/lineage"
)

// newLineage opens --lineage for a run of bronze: its job is the pipeline
// id, its input the Kafka topic (set again once the embedded demo has its
// broker), its outputs the two tables.
func newLineage(cfg Config, getenv func(string) string) (*lineage.Command, error) {
	if *runners.CancelFlag {
		return &lineage.Command{}, nil // --cancel stops a run, it is not one
	}
	em, err := lineage.Open(cfg.Lineage, lineage.APIKey(getenv(lineage.EnvAPIKey)))
	if err != nil {
		return nil, err
	}
	return &lineage.Command{
		Emitter:      em,
		Job:          lineage.Job{Name: cfg.Pipeline, Streaming: !cfg.Bounded, Runner: cfg.Runner},
		Inputs:       []lineage.InputDataset{lineage.KafkaTopic(cfg.Kafka.Brokers, cfg.Kafka.Topic)},
		OutputTables: lineage.IcebergTables(cfg.Catalog, cfg.Pipeline, cfg.Table, cfg.DLQTable),
		Detached:     isAsync(),
		Secrets:      []string{cfg.Kafka.SASLPassword},
	}, nil
}

// lineageFor sets the input and the job type from cfg again, once the
// embedded demo has pointed it at its broker and made the run bounded.
func lineageFor(lin *lineage.Command, cfg Config) {
	lin.Inputs = []lineage.InputDataset{lineage.KafkaTopic(cfg.Kafka.Brokers, cfg.Kafka.Topic)}
	lin.Job.Streaming = !cfg.Bounded
}

// isAsync reports Beam's --async: the Flink job runs on after bronze exits.
func isAsync() bool {
	f := flag.Lookup("async")
	return f != nil && f.Value.String() == "true"
}
