// Command bronze ingests the Kafka topic fintech.debt.raw into the Iceberg
// tables lakehouse.bronze_events and lakehouse.bronze_events_dlq, exactly
// once. Given no Kafka, catalog or warehouse setting at all (or --demo), it
// runs the embedded demo: an in-process Kafka, sample events, and a bounded
// run into ./lakehouse. Otherwise --brokers is required: a deployment
// whose broker list is missing exits 2 naming it, and writes nothing.
//
//	go run ./pipelines/bronze --runner=direct
package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/s3io"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/obs"
	"github.com/haade/haade/transforms/parse"
)

// The metrics this command and its workers serve.
func init() {
	obs.MustRegister(kafkaio.Collectors()...)
	obs.MustRegister(parse.Collectors()...)
	obs.MustRegister(icebergio.Collectors()...)
}

func main() { runners.Main(pipeline) }

// run is the command: runners.Main's harness with bronze's own parts.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return pipeline.Run(args, getenv, stdout, stderr)
}

// pl is the plan of the pipeline that runs (the partitions and where each
// starts), for the summary; Build sets it, again when partitions are added.
var pipeline = func() runners.Pipeline[bronze.Config] {
	var (
		pl   *bronze.Plan
		demo *demoKafka
	)
	return runners.Pipeline[bronze.Config]{
		Name:  "bronze",
		Flags: bronze.Flags,
		Start: func(ctx context.Context, cfg *bronze.Config, stdout io.Writer) (func(), error) {
			var stop func()
			if cfg.Demo {
				var err error
				if demo, err = startDemo(ctx, cfg, stdout); err != nil {
					return nil, runners.Exit(1, fmt.Errorf("embedded demo: %w", err))
				}
				stop = demo.Close
			}
			return stop, checkWarehouse(ctx, *cfg)
		},
		Lineage: lineageOf,
		Build: func(ctx context.Context, s beam.Scope, cfg bronze.Config) (runners.Job, error) {
			var err error
			if pl, err = bronze.Build(ctx, s, cfg); err != nil {
				return runners.Job{}, err
			}
			job := runners.Job{
				// The tables hold the offsets of every window: a stop
				// commits what was read, and the next run goes on from there.
				Stoppable:   true,
				Parallelism: pl.Parallelism(), // one subtask per reader of a topic
				Progress:    cfg.Progress,
				Describe: []any{"topic", cfg.Kafka.Topic, "partitions", pl.Partitions(), "readers", pl.Readers(),
					"tables", strings.Join(cfg.EventTables(), ","), "dlq", cfg.DLQTable, "commit_interval", cfg.CommitInterval},
			}
			if !cfg.Bounded {
				job.Watch = watchPartitions(cfg, pl.Sources)
			}
			return job, nil
		},
		Summary: func(ctx context.Context, stdout io.Writer, cfg bronze.Config, took time.Duration) error {
			if !cfg.Bounded && demo == nil {
				return nil // a stream that was stopped: its tables say the rest
			}
			stats, err := bronze.TableStats(ctx, cfg)
			if err != nil {
				return fmt.Errorf("summary: %w", err)
			}
			if cfg.Bounded && !stop.Requested() {
				if err := bronze.CheckComplete(cfg, pl, stats); err != nil {
					return err
				}
			}
			printSummary(stdout, cfg, pl, took, stats)
			return nil
		},
	}
}()

// checkWarehouse checks at start that an S3 warehouse's bucket exists and
// the credentials can write to it.
func checkWarehouse(ctx context.Context, cfg bronze.Config) error {
	w := cfg.Catalog.Warehouse
	if !strings.HasPrefix(w, "s3://") && !strings.HasPrefix(w, "s3a://") {
		return nil
	}
	rest := w[strings.Index(w, "://")+3:]
	bucket, prefix, _ := strings.Cut(rest, "/")
	endpoint := cfg.Catalog.S3Endpoint
	if endpoint == "" {
		endpoint = "https://s3.amazonaws.com"
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s3io.CheckWritable(ctx, s3io.ConfigFromEnv(endpoint), bucket, prefix); err != nil {
		return fmt.Errorf("--warehouse=%s (--s3-endpoint=%s): %v", w, cfg.Catalog.S3Endpoint, err)
	}
	return nil
}

// parseArgs parses a command line (without the program name) and the
// environment, as main does. Tests and the Kubernetes manifest checks use it.
func parseArgs(args []string, getenv func(string) string) (bronze.Config, error) {
	return runners.ParseConfig(runners.NewFlagSet("bronze"), args, getenv, bronze.Flags)
}
