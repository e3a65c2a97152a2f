package main

import (
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
)

// lineageOf names the datasets of a run of bronze, once the embedded demo
// (if any) has its broker: its input the Kafka topic, its outputs the two
// tables. The SASL password never shows in a FAIL message.
func lineageOf(cfg bronze.Config, lin *lineage.Command) {
	lin.Inputs = []lineage.InputDataset{lineage.KafkaTopic(cfg.Kafka.Brokers, cfg.Kafka.Topic)}
	lin.OutputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Table, cfg.DLQTable)
	lin.Secrets = []string{cfg.Kafka.SASLPassword}
}
