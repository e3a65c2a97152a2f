// Command sidebyside runs HAADE's bronze pipeline and the stack it replaces
// side by side on the same machine, the same Apache Kafka, the same MinIO,
// the same PostgreSQL catalog and the same preloaded events, and measures
// each: events/s, the time until every row is visible in the table, CPU
// seconds and peak RSS.
//
// The contenders:
//
//	bronze   pipelines/bronze on the direct runner (Prism), streaming
//	spark    Spark 3.5 Structured Streaming: Kafka source, from_json,
//	         current_timestamp() as ingested_at, Iceberg's streaming sink
//	         (testing/sidebyside/spark_bronze.py)
//	connect  Kafka Connect with Apache Iceberg's sink connector
//	         (testing/services/connect.sh run)
//	flink    pipelines/bronze --runner=flink --bounded on a standalone
//	         Flink 1.19 cluster (testing/services/flinkcluster.sh), started
//	         once before the first round and stopped at the end (flink.go)
//	native   Iceberg's own Flink sink: a Flink SQL script (Kafka source
//	         bounded at the topic's end, INSERT INTO the Iceberg table)
//	         through Flink's SQL client, on the same cluster (native.go)
//
// Each reads the same topic from its start into a fresh table with a commit
// interval (Spark: trigger) of --commit-interval, and runs as its own child
// process tree. The harness polls the table's current snapshot until it
// holds every event, then stops the contender with SIGTERM and checks that
// the count stayed exact. CPU and peak RSS are sampled over the whole
// process tree from launch until every row is visible.
//
//	go run ./testing/sidebyside --events=2000000
//
// starts the services through testing/services/*.sh, writes
// docs/benchmarks/results/results.json and docs/benchmarks/sidebyside.png,
// and prints the table of docs/benchmarks. --from=results.json redraws the chart and
// the table without running anything.
//
//	go run ./testing/sidebyside --keys=100000 --events=1000000 --contenders=flink,native
//
// compares upserts instead (upsert.go): the events get one of --keys Kafka
// keys each, in the key's partition, --tombstones of them tombstones; flink
// runs bronze --upsert, native Flink SQL's upsert-kafka into an Iceberg v2
// table in upsert mode (native_upsert.go). A run is done when the table,
// read with iceberg-go's scan, holds exactly the latest record of each live
// key; the harness then counts the table's data and delete files and times
// three full scans of it. It writes docs/benchmarks/results/upserts.json and
// prints its own table, with no chart.
//
//	go run ./testing/sidebyside --freshness --rates=20000,50000 --duration=3m
//
// measures freshness under a steady stream instead (freshness*.go): each
// contender streams from an empty topic of its own, a paced producer sends
// each rate for the duration, and every record's freshness, the commit time
// (timestamp-ms) of the snapshot that added it minus its Kafka timestamp, is
// read back from each snapshot's added files. It writes
// docs/benchmarks/results/freshness.json and docs/benchmarks/freshness.png, and prints p50, p99
// and max per contender and rate, and the highest rate whose lag stayed
// flat. --freshness --from=freshness.json redraws them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// Config is the command line.
type Config struct {
	Events         int
	Partitions     int
	CommitInterval time.Duration
	Contenders     []string
	Repeat         int
	Timeout        time.Duration
	Seed           uint64
	// Keys, when > 0, makes the workload keyed (--keys): each event has one
	// of Keys Kafka keys, Tombstones of them are tombstones, and the
	// contenders (bronze, flink and native only) upsert (upsert.go).
	Keys       int
	Tombstones float64
	Timestamps string
	Namespace  string
	Keep       bool
	// FlinkBundleTime is the flink contender's --flink-max-bundle-time; 0
	// leaves runners/flink.go's default.
	FlinkBundleTime time.Duration
	// FlinkParallelism is the flink contender's --parallelism; 0 leaves
	// runners/flink.go's default (the partitions, up to the free slots).
	FlinkParallelism int
	Out, Chart       string
	From             string
	FreshConfig      // --freshness and its flags (freshness_flags.go)
}

func parseArgs(args []string) (Config, error) {
	fs := flag.NewFlagSet("sidebyside", flag.ContinueOnError)
	var c Config
	fs.IntVar(&c.Events, "events", 2_000_000, "events preloaded into the topic, all valid")
	fs.IntVar(&c.Partitions, "partitions", 8, "partitions of the topic")
	fs.DurationVar(&c.CommitInterval, "commit-interval", 2*time.Second, "bronze's --commit-interval, Spark's trigger and the Connect sink's commit interval")
	contenders := fs.String("contenders", "bronze,spark,connect", "comma-separated: bronze, spark, connect, flink, native")
	fs.DurationVar(&c.FlinkBundleTime, "flink-bundle-time", 0, "the flink contender's --flink-max-bundle-time (default: runners/flink.go's)")
	fs.IntVar(&c.FlinkParallelism, "flink-parallelism", 0, "the flink contender's --parallelism (default: runners/flink.go's, the partition count up to the free slots)")
	fs.IntVar(&c.Repeat, "repeat", 1, "runs of each contender, interleaved")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Minute, "longest a contender may take until every row is visible")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the sample events")
	fs.IntVar(&c.Keys, "keys", 0, "upsert: give the events this many Kafka keys (kafkatest.SpreadKeys, each in its key's partition) and run bronze and flink with --upsert, native with upsert-kafka into an Iceberg v2 table in upsert mode; 0 appends")
	fs.Float64Var(&c.Tombstones, "tombstones", 0.1, "with --keys: the share of the events that are tombstones (a key and no value), each chosen at random from --seed")
	fs.StringVar(&c.Timestamps, "timestamps", "utc", "utc: every event time in UTC (Z); mixed: 1 in 10 with a +02:00 offset, as kafkatest.Sample makes them (the Kafka Connect sink fails on those)")
	fs.StringVar(&c.Namespace, "namespace", "sidebyside", "namespace of the tables the runs make")
	fs.BoolVar(&c.Keep, "keep", false, "keep the topic and the tables")
	fs.StringVar(&c.Out, "out", "docs/benchmarks/results/results.json", "where the results go, as JSON; empty writes none (with --keys: docs/benchmarks/results/upserts.json)")
	fs.StringVar(&c.Chart, "chart", "docs/benchmarks/sidebyside.png", "where the chart goes, as PNG; empty draws none (with --keys: none)")
	fs.StringVar(&c.From, "from", "", "draw the chart and print the table from this results file, and run nothing")
	checkFresh := addFreshFlags(fs, &c)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if err := checkFresh(); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Keys > 0 {
		// The append results and chart stay as they are.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["out"] {
			c.Out = "docs/benchmarks/results/upserts.json"
		}
		if !set["chart"] {
			c.Chart = ""
		}
	}
	switch {
	case c.Events <= 0:
		return Config{}, fmt.Errorf("--events=%d: want > 0", c.Events)
	case c.Partitions <= 0:
		return Config{}, fmt.Errorf("--partitions=%d: want > 0", c.Partitions)
	case c.CommitInterval < 100*time.Millisecond:
		return Config{}, fmt.Errorf("--commit-interval=%v: want >= 100ms", c.CommitInterval)
	case c.Timestamps != "utc" && c.Timestamps != "mixed":
		return Config{}, fmt.Errorf("--timestamps=%q: want utc or mixed", c.Timestamps)
	case c.FlinkParallelism < 0:
		return Config{}, fmt.Errorf("--flink-parallelism=%d: want > 0, or 0 for the default", c.FlinkParallelism)
	case c.FlinkBundleTime < 0:
		return Config{}, fmt.Errorf("--flink-bundle-time=%v: want > 0", c.FlinkBundleTime)
	case c.Repeat <= 0:
		return Config{}, fmt.Errorf("--repeat=%d: want > 0", c.Repeat)
	case c.Keys < 0 || c.Keys > c.Events:
		return Config{}, fmt.Errorf("--keys=%d: want 0 (append) up to --events=%d", c.Keys, c.Events)
	case c.Keys > 0 && c.Keys%7919 == 0:
		return Config{}, fmt.Errorf("--keys=%d: not a multiple of 7919 (kafkatest.SpreadKeys spreads the events over the keys with it)", c.Keys)
	case c.Tombstones < 0 || c.Tombstones >= 1:
		return Config{}, fmt.Errorf("--tombstones=%g: want 0 up to below 1", c.Tombstones)
	case c.Keys > 0 && c.Freshness:
		return Config{}, fmt.Errorf("--keys=%d: a bounded backlog only, not with --freshness", c.Keys)
	case strings.ContainsAny(c.Namespace, ". "):
		return Config{}, fmt.Errorf("--namespace=%q: no dots or spaces", c.Namespace)
	}
	for _, name := range strings.Split(*contenders, ",") {
		name = strings.TrimSpace(name)
		if _, ok := contenderByName[name]; !ok {
			return Config{}, fmt.Errorf("--contenders: unknown %q; want bronze, spark, connect, flink or native", name)
		}
		if (name == "flink" || name == "native") && c.Freshness {
			return Config{}, fmt.Errorf("--contenders: %s runs a bounded backlog only, not with --freshness", name)
		}
		if c.Keys > 0 && name != "bronze" && name != "flink" && name != "native" {
			return Config{}, fmt.Errorf("--contenders: %s does not upsert; with --keys, want bronze, flink or native", name)
		}
		if name == "native" && c.Timestamps != "utc" {
			// Flink's JSON format reads ISO-8601 times in UTC only ("Z"):
			// the job would fail on the first +02:00.
			return Config{}, fmt.Errorf("--contenders: native needs --timestamps=utc (Flink's json format reads no UTC offset)")
		}
		c.Contenders = append(c.Contenders, name)
	}
	return c, nil
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg Config) error {
	if cfg.Freshness {
		return runFreshness(ctx, cfg)
	}
	if cfg.From != "" {
		rep, err := readReport(cfg.From)
		if err != nil {
			return err
		}
		return publish(rep, cfg)
	}
	root, err := cmdtest.RepoRoot()
	if err != nil {
		return err
	}
	rep, err := measure(ctx, cfg, root)
	if err != nil {
		return err
	}
	if cfg.Out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.Out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "sidebyside: wrote %s\n", cfg.Out)
	}
	return publish(rep, cfg)
}

// publish draws the chart and prints the table; a keyed report has a
// table of its own and no chart.
func publish(rep Report, cfg Config) error {
	if rep.Keys > 0 {
		fmt.Print(markdownUpsert(rep))
		return nil
	}
	if cfg.Chart != "" {
		if err := writeChart(cfg.Chart, rep); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "sidebyside: drew %s\n", cfg.Chart)
	}
	fmt.Print(markdown(rep))
	return nil
}

func readReport(path string) (Report, error) {
	var rep Report
	b, err := os.ReadFile(path)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
