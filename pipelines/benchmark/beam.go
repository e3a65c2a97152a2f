package main

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/enrich"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
)

// beamPipeline is the pipeline id of the Beam run's snapshots.
const beamPipeline = "benchmark-beam"

// bronzeTable and dlqTable are the tables of pipelines/bronze, under their
// default names.
var (
	bronzeTable = icebergio.TableOf(tables.Bronze)
	dlqTable    = icebergio.TableOf(tables.DeadLetters)
)

// runBeam runs the bronze pipeline, wired as pipelines/bronze's build does
// (that package is a main and cannot be imported): Kafka, parse, enrich,
// Iceberg, in bounded mode, on --runner=direct (Prism, in process).
func runBeam(ctx context.Context, kc kafkaio.Config, cc icebergio.CatalogConfig, interval time.Duration) error {
	p, s := beam.NewPipelineWithRoot()
	events, err := icebergio.Open(ctx, cc, bronzeTable, beamPipeline, icebergio.Every(interval))
	if err != nil {
		return err
	}
	dead, err := icebergio.Open(ctx, cc, dlqTable, beamPipeline, icebergio.Every(interval))
	if err != nil {
		return err
	}
	committed := icebergio.Min(events.Committed, dead.Committed)[kc.Topic]
	parts, err := kafkaio.Plan(ctx, kc, committed, kafkaio.Earliest, true, 20*time.Second)
	if err != nil {
		return err
	}
	start := icebergio.Offsets{}
	for _, p := range parts {
		start.Set(kc.Topic, p.ID, p.Start)
	}

	records := kafkaio.Read(s, kc, parts)
	good, bad := parse.Events(s, records)
	good = enrich.IngestedAt(s, good)
	bad = enrich.IngestedAt(s, bad)
	icebergio.Write(s, events, start, good)
	icebergio.Write(s, dead, start, bad)

	_, err = runners.Run(ctx, "direct", p)
	return err
}
