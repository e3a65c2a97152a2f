// Command gold computes lakehouse.gold_source_daily (events per source per
// day) and lakehouse.gold_trending_terms (the top terms of each hour) from
// the silver table. It recomputes the days that new silver snapshots touch
// and overwrites those partitions, so a rerun changes nothing.
//
//	go run ./pipelines/gold
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/haade/haade/runners/obs"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/transforms/gold"
)

// Config is the gold pipeline's configuration; every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	Runner, Endpoint       string
	Catalog                icebergio.CatalogConfig
	Source                 string
	DailyTable, TermsTable string
	TopTerms               int
	Pipeline               string
	// Lineage is where OpenLineage run events go (runners/lineage); empty: off.
	Lineage string
}

func flags(fs *flag.FlagSet) func() (Config, error) {
	runner := runners.String(fs, "runner", "direct", "direct (Prism, in process), prism, flink or universal")
	endpoint := runners.String(fs, "endpoint", "", "job server HOST:PORT for flink and universal")
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", "lakehouse.silver_events", "silver table to read")
	daily := fs.String("daily-table", "lakehouse.gold_source_daily", "events per source per day")
	terms := fs.String("terms-table", "lakehouse.gold_trending_terms", "top terms per hour")
	top := fs.Int("top-terms", 10, "terms kept per hour")
	pipeline := fs.String("pipeline-id", "gold", "stable pipeline id written into every snapshot summary")
	lineageURL := lineage.Flag(fs)
	return func() (Config, error) {
		c := Config{Runner: runner(), Endpoint: endpoint(), Catalog: catalog(), Source: *source, DailyTable: *daily,
			TermsTable: *terms, TopTerms: *top, Pipeline: *pipeline, Lineage: lineageURL()}
		if err := runners.Validate(c.Runner, c.Endpoint); err != nil {
			return c, err
		}
		for name, id := range map[string]string{"--source": c.Source, "--daily-table": c.DailyTable, "--terms-table": c.TermsTable} {
			if _, err := icebergio.Identifier(id); err != nil {
				return c, fmt.Errorf("%s: %v", name, err)
			}
		}
		if c.TopTerms <= 0 {
			return c, fmt.Errorf("--top-terms=%d: want > 0", c.TopTerms)
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

// The metrics of the tables this command writes.
func init() { obs.MustRegister(icebergio.Collectors()...) }

func main() { os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	cfg, code, ok := runners.Command("gold", args, getenv, stdout, stderr, flags)
	if !ok {
		return code
	}
	lin, err := newLineage(cfg, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "gold: --lineage: %v\n", err)
		return 2
	}
	defer func() { lin.End(context.Background(), code) }()
	ctx := context.Background()
	p, s := beam.NewPipelineWithRoot()
	if err := build(ctx, s, cfg); err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "gold: %v\n", err)
		return 2
	}
	lin.Start(ctx)
	if _, err := runners.Run(ctx, cfg.Runner, p); err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "gold: run failed: %v\n", err)
		return 1
	}
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "gold: %v\n", err)
		return 1
	}
	for _, id := range []string{cfg.DailyTable, cfg.TermsTable} {
		st, err := icebergio.Stat(ctx, cat, id, cfg.Pipeline)
		if err != nil {
			fmt.Fprintf(stderr, "gold: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%-30s %6d rows  %3d snapshots\n", id, st.Rows, st.Snapshots)
	}
	return 0
}

// build wires new silver snapshots -> the days they touch -> every silver
// row of those days -> per-source counts and trending terms -> overwrite.
func build(ctx context.Context, s beam.Scope, cfg Config) error {
	daily, err := icebergio.Open(ctx, cfg.Catalog, icebergio.Table{Ident: cfg.DailyTable, Row: gold.SourceDaily{},
		Partition: []icebergio.PartitionField{{Column: "day", Transform: "identity"}}}, cfg.Pipeline)
	if err != nil {
		return err
	}
	terms, err := icebergio.Open(ctx, cfg.Catalog, icebergio.Table{Ident: cfg.TermsTable, Row: gold.TrendingTerm{},
		Partition: []icebergio.PartitionField{{Column: "hour", Transform: "day"}}}, cfg.Pipeline)
	if err != nil {
		return err
	}
	src, _, err := snapshots.ResumeSource(ctx, cfg.Catalog, cfg.Source, true, daily, terms)
	if err != nil {
		return fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	progress := icebergio.Offsets{}
	progress.Set(icebergio.SourceTopic(cfg.Source), 0, src.Until+1)

	snapshots := snapshots.ReadSnapshots(s, src)
	days := gold.ReadDays(s, cfg.Catalog, cfg.Source, gold.TouchedDays(s, snapshots))
	icebergio.OverwriteDays(s, daily, "day", progress, gold.SourceDailyCounts(s, days))
	icebergio.OverwriteDays(s, terms, "hour", progress, gold.TrendingTerms(s, days, cfg.TopTerms))
	return nil
}
