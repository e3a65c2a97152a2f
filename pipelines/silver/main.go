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
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/obs"
	"github.com/haade/haade/transforms/silver"
	"github.com/haade/haade/transforms/tables"
)

// Config is the silver pipeline's configuration; every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	// Common: --runner, --endpoint, --pipeline-id, --metrics-addr,
	// --log-format, --lineage and --bounded (process the bronze snapshots
	// that exist at start and exit; otherwise poll for new ones every Poll).
	runners.Common
	Catalog icebergio.CatalogConfig
	// Source is the bronze table; Table and Rejects are written.
	Source, Table, Rejects string
	CommitInterval         time.Duration
	Horizon                time.Duration
	Poll                   time.Duration
}

func flags(fs *flag.FlagSet) func() (Config, error) {
	common := runners.CommonFlags(fs, runners.Defaults{Pipeline: "silver",
		Bounded: "process the bronze snapshots that exist now, commit, and exit"})
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", tables.Bronze.Ident, "bronze table to read")
	tbl := fs.String("table", tables.Silver.Ident, "silver table")
	rejects := fs.String("rejects-table", tables.SilverRejects.Ident, "table of rows that fail validation")
	interval := fs.Duration("commit-interval", 10*time.Second, "window length: one snapshot per interval")
	horizon := fs.Duration("dedup-horizon", 24*time.Hour, "drop a row whose source, title and timestamp match a row ingested at most this long before")
	poll := fs.Duration("poll", 5*time.Second, "how often an unbounded run looks for new bronze snapshots")
	return func() (Config, error) {
		c := Config{Catalog: catalog(), Source: *source, Table: *tbl, Rejects: *rejects,
			CommitInterval: *interval, Horizon: *horizon, Poll: *poll}
		var err error
		if c.Common, err = common(); err != nil {
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
		return c, nil
	}
}

// The metrics this command and its workers serve.
func init() { obs.MustRegister(icebergio.Collectors()...) }

var pipeline = runners.Pipeline[Config]{
	Name:    "silver",
	Flags:   flags,
	Lineage: lineageOf,
	Build: func(ctx context.Context, s beam.Scope, cfg Config) (runners.Job, error) {
		// Silver keeps its offsets per window: a stop commits what it read.
		return runners.Job{Stoppable: true, Describe: []any{"source", cfg.Source, "table", cfg.Table}}, build(ctx, s, cfg)
	},
	Summary: func(ctx context.Context, stdout io.Writer, cfg Config, _ time.Duration) error {
		return summary(ctx, stdout, cfg)
	},
}

func main() { runners.Main(pipeline) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return pipeline.Run(args, getenv, stdout, stderr)
}

func summary(ctx context.Context, out io.Writer, cfg Config) error {
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		return err
	}
	for _, id := range []string{cfg.Table, cfg.Rejects} {
		st, err := icebergio.Stat(ctx, cat, id, cfg.Pipeline)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-28s %8d rows  %3d snapshots  bronze processed up to sequence %d\n", id, st.Rows, st.Snapshots,
			st.Offsets[icebergio.SourceTopic(cfg.Source)][0]-1)
	}
	return nil
}

// build wires bronze snapshots -> normalise and validate -> deduplicate ->
// silver and rejects.
func build(ctx context.Context, s beam.Scope, cfg Config) error {
	events, err := icebergio.Open(ctx, cfg.Catalog, tables.Silver.As(cfg.Table), cfg.Pipeline, icebergio.Every(cfg.CommitInterval))
	if err != nil {
		return err
	}
	rejects, err := icebergio.Open(ctx, cfg.Catalog, tables.SilverRejects.As(cfg.Rejects), cfg.Pipeline, icebergio.Every(cfg.CommitInterval))
	if err != nil {
		return err
	}
	src, start, err := snapshots.ResumeSource(ctx, cfg.Catalog, cfg.Source, cfg.Bounded, events, rejects)
	if err != nil {
		return fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	src.Poll = cfg.Poll

	if _, err := snapshots.FollowPromotions(ctx, cfg.Catalog, cfg.Source, cfg.Table); err != nil {
		return fmt.Errorf("--table=%s: %w", cfg.Table, err)
	}
	snaps := snapshots.Follow(s, snapshots.ReadSnapshots(s, src), snapshots.FollowOptions{Catalog: cfg.Catalog, Source: cfg.Source, Target: cfg.Table})
	clean, bad := silver.FromBronze(s, snapshots.SnapshotBatches(s, snaps, tables.BronzeSnapshot{}))
	clean = dedup(s, clean, cfg.Catalog, cfg.Table, cfg.Horizon)
	icebergio.Write(s, events, start, clean)
	icebergio.Write(s, rejects, start, bad)
	return nil
}
