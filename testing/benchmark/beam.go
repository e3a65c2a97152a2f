package main

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/tables"
)

// beamPipeline is the pipeline id of the Beam run's snapshots.
const beamPipeline = "benchmark-beam"

// runBeam runs the bronze pipeline as pipelines/bronze builds it
// (bronze.Build: the topic, the tables, the plan of the read, Kafka, parse,
// enrich, Iceberg), in bounded mode, on --runner=direct (Prism, in process);
// with upsert, as --upsert does (the latest event per key). The tables are
// checked after the clock stops (check).
func runBeam(ctx context.Context, kc kafkaio.Config, cc icebergio.CatalogConfig, interval time.Duration, readers int, upsert bool) error {
	cfg := bronze.Config{
		Common:  runners.Common{Runner: "direct", Pipeline: beamPipeline, Bounded: true},
		Kafka:   kc,
		Catalog: cc,
		Table:   tables.Bronze.Ident, DLQTable: tables.DeadLetters.Ident,
		CommitInterval: interval,
		Start:          kafkaio.Earliest,
		Readers:        readers,
		OnRecreated:    "fail",
		Upsert:         upsert,
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	if _, err := bronze.Build(ctx, s, cfg); err != nil {
		return err
	}
	_, err := runners.Run(ctx, cfg.Runner, p)
	return err
}
