package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/transforms/parse/event"
	sampleevents "github.com/haade/haade/transforms/sample"
)

type demoKafka struct {
	*embedded.Cluster
	produced int
}

// startDemo starts an in-process Kafka, produces sample events (a few
// malformed) and points cfg at it, in bounded mode.
func startDemo(ctx context.Context, cfg *bronze.Config, out io.Writer) (*demoKafka, error) {
	c, err := embedded.Start(cfg.Kafka.Topic, 4)
	if err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	if err := embedded.Produce(ctx, c.Brokers(), cfg.Kafka.Topic, sampleevents.Sample(cfg.DemoEvents, seed, 0.01, event.MalformedCorpus)); err != nil {
		c.Close()
		return nil, err
	}
	if err := embedded.Produce(ctx, c.Brokers(), cfg.Kafka.Topic, [][]byte{nil}); err != nil { // one tombstone
		c.Close()
		return nil, err
	}
	cfg.Kafka.Brokers = c.Brokers()
	cfg.Bounded = true
	cfg.Start = "earliest"
	// The demo's broker is new on every run, and so is its topic's id: the
	// tables of an earlier demo run hold offsets of a topic that is gone.
	// Read the new one from its start, as if the topic had been recreated.
	cfg.OnRecreated = "earliest"
	fmt.Fprintf(out, "embedded demo: in-process Kafka at %s, produced %d sample events (about 1%% malformed) and 1 tombstone to %s\n",
		strings.Join(c.Brokers(), ","), cfg.DemoEvents, cfg.Kafka.Topic)
	return &demoKafka{Cluster: c, produced: cfg.DemoEvents + 1}, nil
}

// printSummary says what the run did: records read, rows in each table,
// snapshots, and where the tables live.
func printSummary(out io.Writer, cfg bronze.Config, pl *bronze.Plan, took time.Duration, stats []icebergio.TableStat) {
	var read int64
	for _, src := range pl.Sources {
		for _, p := range src.Partitions {
			if p.End != math.MaxInt64 {
				read += p.End - p.Start
			}
		}
	}
	fmt.Fprintf(out, "read %d Kafka offsets from %d partitions of %s in %v\n", read, pl.Partitions(), cfg.Kafka.Topic, took.Round(time.Millisecond))
	if cfg.Runner == "flink" {
		p, why := cfg.FlinkParallelism(pl.Parallelism())
		fmt.Fprintf(out, "on Flink with parallelism %d: %s\n", p, why)
	}
	for i, ident := range cfg.AllTables() {
		st := stats[i]
		deletes := ""
		if st.Deletes > 0 {
			deletes = fmt.Sprintf(" (less %d position deletes)", st.Deletes)
		}
		fmt.Fprintf(out, "%-32s %8d rows%s  %3d snapshots  %4d data files  %s\n", ident, st.Rows, deletes, st.Snapshots, st.DataFiles, st.Location)
	}
	wh, _ := cfg.Catalog.WarehouseURL()
	fmt.Fprintf(out, "catalog %q (%s %s), warehouse %s\n", cfg.Catalog.Name, cfg.Catalog.Type, secret.RedactURI(cfg.Catalog.URI), wh)
}
