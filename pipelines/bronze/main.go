// Command bronze ingests the Kafka topic fintech.debt.raw into the Iceberg
// tables lakehouse.bronze_events and lakehouse.bronze_events_dlq, exactly
// once. With no --brokers it runs the embedded demo: an in-process Kafka,
// sample events, and a bounded run into ./lakehouse.
//
//	go run ./pipelines/bronze --runner=direct
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/parse"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/s3io"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/obs"
)

// The metrics this command and its workers serve.
func init() {
	obs.MustRegister(kafkaio.Collectors()...)
	obs.MustRegister(parse.Collectors()...)
	obs.MustRegister(icebergio.Collectors()...)
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	fs := runners.NewFlagSet("bronze")
	config := flags(fs)
	if err := runners.Parse(fs, args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: bronze [flags]; every flag can also be set as HAADE_<FLAG>")
			runners.Usage(stdout, fs)
			return 0
		}
		fmt.Fprintf(stderr, "bronze: %v\n", err)
		return 2
	}
	if f := fs.Lookup("worker"); f != nil && f.Value.String() == "true" {
		// A worker process of a remote runner (Flink EXTERNAL, PROCESS):
		// serve its metrics, then let the harness take over.
		_ = obs.SetupLogging(stderr, "json")
		runners.StartWorker()
		if addr := fs.Lookup("metrics-addr").Value.String(); addr != "" {
			if err := obs.Serve(context.Background(), addr); err != nil {
				slog.Warn("worker metrics not served", "err", err)
			}
		}
	}
	beam.Init() // in worker mode this runs the harness and exits
	cfg, err := config()
	if err != nil {
		fmt.Fprintf(stderr, "bronze: %v\n", err)
		return 2
	}
	_ = obs.SetupLogging(stderr, cfg.LogFormat)
	lin, err := newLineage(cfg, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "bronze: --lineage: %v\n", err)
		return 2
	}
	defer func() { lin.End(context.Background(), code) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// runCtx is the job's: on Flink, cancelling it cancels the job.
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
		case <-ctx.Done():
			return // run returned: this handler is done
		}
		if cfg.Runner == "flink" {
			// The workers may run elsewhere (EXTERNAL), out of reach of
			// kafkaio.Stop, and an unbounded Flink job does not end when its
			// reads do: cancel the job. The tables hold the offsets, so the
			// next run re-reads whatever was not committed.
			slog.Info("stopping: cancelling the Flink job; the next run resumes from the tables' offsets")
			cancelRun()
		} else {
			// Cancelling Prism's context crashes it: stop the reads instead,
			// so the last windows commit and the run returns.
			slog.Info("stopping: reads end at their current offsets, the last windows commit")
			kafkaio.Stop()
		}
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
		slog.Error("second signal: exiting now, without the commit in progress; the next run reads its records again from the tables' offsets, so nothing is lost or stored twice")
		os.Exit(130)
	}()
	if err := obs.Serve(ctx, cfg.MetricsAddr); err != nil {
		fmt.Fprintf(stderr, "bronze: %v\n", err)
		return 2
	}

	var demo *demoKafka
	if len(cfg.Kafka.Brokers) == 0 {
		if demo, err = startDemo(ctx, &cfg, stdout); err != nil {
			lin.Failed(err)
			fmt.Fprintf(stderr, "bronze: embedded demo: %v\n", err)
			return 1
		}
		defer demo.Close()
	}
	lineageFor(lin, cfg) // the demo's broker, and its bounded run
	if err := checkWarehouse(ctx, cfg); err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "bronze: %v\n", err)
		return 2
	}

	p, s := beam.NewPipelineWithRoot()
	started := time.Now()
	pl, err := build(ctx, s, cfg)
	if err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "bronze: %v\n", err)
		return 2
	}
	lin.Start(ctx)
	obs.SetReady(true)
	if cfg.Progress || obs.IsTerminal(os.Stderr) {
		go obs.Progress(ctx, stderr, 5*time.Second)
	}
	slog.Info("running", "runner", cfg.Runner, "topic", cfg.Kafka.Topic, "partitions", len(pl.Partitions),
		"bounded", cfg.Bounded, "table", cfg.Table, "dlq", cfg.DLQTable, "commit_interval", cfg.CommitInterval)
	if pl, err = runGrowing(ctx, runCtx, cfg, p, pl); err != nil {
		lin.Failed(err)
		if runCtx.Err() != nil {
			fmt.Fprintf(stderr, "bronze: stopped: %v\n", err)
			return 130
		}
		fmt.Fprintf(stderr, "bronze: run failed: %v\n", err)
		return 1
	}
	if cfg.Bounded || demo != nil {
		stats, err := tableStats(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "bronze: summary: %v\n", err)
			return 1
		}
		if cfg.Bounded && !kafkaio.Stopped() {
			if err := checkComplete(cfg, pl, stats); err != nil {
				lin.Failed(err)
				fmt.Fprintf(stderr, "bronze: %v\n", err)
				return 1
			}
		}
		printSummary(stdout, cfg, pl, time.Since(started), stats)
	}
	return 0
}

// checkWarehouse checks at start that an S3 warehouse's bucket exists and
// the credentials can write to it.
func checkWarehouse(ctx context.Context, cfg Config) error {
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
