package main

import (
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
)

// lineageOf names the datasets of a run of bronze, once the embedded demo
// (if any) has its broker: its inputs the Kafka topics, its outputs the
// tables. The SASL password never shows in a FAIL message.
func lineageOf(cfg bronze.Config, lin *lineage.Command) {
	for _, t := range cfg.Topics() {
		lin.Inputs = append(lin.Inputs, lineage.KafkaTopic(cfg.Kafka.Brokers, t))
	}
	lin.OutputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.AllTables()...)
	lin.Secrets = []string{cfg.Kafka.SASLPassword}
}
