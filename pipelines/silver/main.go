// Command silver turns lakehouse.bronze_events into lakehouse.silver_events:
// clean, validated and deduplicated rows, with rejects in
// lakehouse.silver_rejects, exactly once, keyed by the bronze snapshots it
// has processed.
//
//	go run ./pipelines/silver --bounded
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/obs"
	"github.com/haade/haade/transforms/silver"
)

// Config is the silver pipeline's configuration; every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	Runner, Endpoint string
	Catalog          icebergio.CatalogConfig
	// Source is the bronze table; Table and Rejects are written.
	Source, Table, Rejects string
	CommitInterval         time.Duration
	Horizon                time.Duration
	// Bounded processes the bronze snapshots that exist at start and exits;
	// otherwise it polls for new ones every Poll.
	Bounded     bool
	Poll        time.Duration
	Pipeline    string
	MetricsAddr string
	// Lineage is where OpenLineage run events go (runners/lineage); empty: off.
	Lineage string
}

func flags(fs *flag.FlagSet) func() (Config, error) {
	runner := runners.String(fs, "runner", "direct", "direct (Prism, in process), prism, flink or universal")
	endpoint := runners.String(fs, "endpoint", "", "job server HOST:PORT for flink and universal")
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", "lakehouse.bronze_events", "bronze table to read")
	tbl := fs.String("table", "lakehouse.silver_events", "silver table")
	rejects := fs.String("rejects-table", "lakehouse.silver_rejects", "table of rows that fail validation")
	interval := fs.Duration("commit-interval", 10*time.Second, "window length: one snapshot per interval")
	horizon := fs.Duration("dedup-horizon", 24*time.Hour, "drop a row whose source, title and timestamp match a row ingested at most this long before")
	bounded := fs.Bool("bounded", false, "process the bronze snapshots that exist now, commit, and exit")
	poll := fs.Duration("poll", 5*time.Second, "how often an unbounded run looks for new bronze snapshots")
	pipeline := fs.String("pipeline-id", "silver", "stable pipeline id written into every snapshot summary")
	metrics := fs.String("metrics-addr", "", "address of /metrics; empty turns it off")
	lineageURL := lineage.Flag(fs)
	return func() (Config, error) {
		c := Config{Runner: runner(), Endpoint: endpoint(), Catalog: catalog(), Source: *source, Table: *tbl, Rejects: *rejects,
			CommitInterval: *interval, Horizon: *horizon, Bounded: *bounded, Poll: *poll, Pipeline: *pipeline, MetricsAddr: *metrics, Lineage: lineageURL()}
		if err := runners.Validate(c.Runner, c.Endpoint); err != nil {
			return c, err
		}
		for flagName, id := range map[string]string{"--source": c.Source, "--table": c.Table, "--rejects-table": c.Rejects} {
			if _, err := icebergio.Identifier(id); err != nil {
				return c, fmt.Errorf("%s: %v", flagName, err)
			}
		}
		if c.Horizon <= 0 {
			return c, fmt.Errorf("--dedup-horizon=%v: want > 0", c.Horizon)
		}
		if c.CommitInterval < 100*time.Millisecond || (24*time.Hour)%c.CommitInterval != 0 {
			return c, fmt.Errorf("--commit-interval=%v: want at least 100ms, dividing a day", c.CommitInterval)
		}
		if _, err := c.Catalog.Properties(); err != nil {
			return c, fmt.Errorf("--catalog-uri/--warehouse: %v", err)
		}
		if _, err := lineage.ParseURL(c.Lineage); err != nil {
			return c, fmt.Errorf("--lineage: %v", err)
		}
		return c, nil
	}
}

// The metrics this command and its workers serve.
func init() { obs.MustRegister(icebergio.Collectors()...) }

func main() { os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	cfg, code, ok := runners.Command("silver", args, getenv, stdout, stderr, flags)
	if !ok {
		return code
	}
	lin, err := newLineage(cfg, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "silver: --lineage: %v\n", err)
		return 2
	}
	defer func() { lin.End(context.Background(), code) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			// Stop polling: the last windows commit and the run returns.
			snapshots.StopReads()
		case <-ctx.Done():
		}
	}()
	if err := obs.Serve(ctx, cfg.MetricsAddr); err != nil {
		fmt.Fprintf(stderr, "silver: %v\n", err)
		return 2
	}
	p, s := beam.NewPipelineWithRoot()
	if err := build(ctx, s, cfg); err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "silver: %v\n", err)
		return 2
	}
	lin.Start(ctx)
	if _, err := runners.Run(ctx, cfg.Runner, p); err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "silver: run failed: %v\n", err)
		return 1
	}
	return summary(ctx, stdout, cfg)
}

func summary(ctx context.Context, out io.Writer, cfg Config) int {
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		fmt.Fprintln(out, err)
		return 1
	}
	for _, id := range []string{cfg.Table, cfg.Rejects} {
		st, err := icebergio.Stat(ctx, cat, id, cfg.Pipeline)
		if err != nil {
			fmt.Fprintln(out, err)
			return 1
		}
		fmt.Fprintf(out, "%-28s %8d rows  %3d snapshots  bronze processed up to sequence %d\n", id, st.Rows, st.Snapshots,
			st.Offsets[icebergio.SourceTopic(cfg.Source)][0]-1)
	}
	return 0
}

// build wires bronze snapshots -> normalise and validate -> deduplicate ->
// silver and rejects.
func build(ctx context.Context, s beam.Scope, cfg Config) error {
	events, err := icebergio.Open(ctx, cfg.Catalog, icebergio.Table{Ident: cfg.Table, Row: silver.Event{},
		Partition: []icebergio.PartitionField{{Column: "timestamp", Transform: "day"}}}, cfg.Pipeline)
	if err != nil {
		return err
	}
	rejects, err := icebergio.Open(ctx, cfg.Catalog, icebergio.Table{Ident: cfg.Rejects, Row: silver.Reject{}}, cfg.Pipeline)
	if err != nil {
		return err
	}
	events.Interval, rejects.Interval = cfg.CommitInterval, cfg.CommitInterval
	src, start, err := snapshots.ResumeSource(ctx, cfg.Catalog, cfg.Source, cfg.Bounded, events, rejects)
	if err != nil {
		return fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	src.Poll = cfg.Poll

	if _, err := snapshots.FollowPromotions(ctx, cfg.Catalog, cfg.Source, cfg.Table); err != nil {
		return fmt.Errorf("--table=%s: %w", cfg.Table, err)
	}
	snapshots := silver.Follow(s, snapshots.ReadSnapshots(s, src), silver.FollowOptions{Catalog: cfg.Catalog, Source: cfg.Source, Target: cfg.Table})
	clean, bad := silver.FromBronze(s, snapshots)
	clean = silver.Dedup(s, clean, silver.DedupOptions{Horizon: cfg.Horizon, Catalog: cfg.Catalog, Table: cfg.Table})
	icebergio.Write(s, events, start, clean)
	icebergio.Write(s, rejects, start, bad)
	return nil
}
