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
	"time"

	"github.com/haade/haade/runners/obs"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/gold"
	"github.com/haade/haade/transforms/tables"
)

// Config is the gold pipeline's configuration; every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	// Common: --runner, --endpoint, --pipeline-id, --metrics-addr,
	// --log-format and --lineage. Every run of gold is bounded.
	runners.Common
	Catalog                icebergio.CatalogConfig
	Source                 string
	DailyTable, TermsTable string
	TopTerms               int
}

func flags(fs *flag.FlagSet) func() (Config, error) {
	common := runners.CommonFlags(fs, runners.Defaults{Pipeline: "gold"})
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", tables.Silver.Ident, "silver table to read")
	daily := fs.String("daily-table", tables.GoldSourceDaily.Ident, "events per source per day")
	terms := fs.String("terms-table", tables.GoldTrendingTerms.Ident, "top terms per hour")
	top := fs.Int("top-terms", 10, "terms kept per hour")
	return func() (Config, error) {
		c := Config{Catalog: catalog(), Source: *source, DailyTable: *daily, TermsTable: *terms, TopTerms: *top}
		var err error
		if c.Common, err = common(); err != nil {
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
		return c, nil
	}
}

// The metrics of the tables this command writes.
func init() { obs.MustRegister(icebergio.Collectors()...) }

// Gold overwrites the days it recomputes at the end of its run, so a stop
// commits nothing: the job is not stoppable, and a signal ends it at once.
var pipeline = runners.Pipeline[Config]{
	Name:    "gold",
	Flags:   flags,
	Lineage: lineageOf,
	Build: func(ctx context.Context, s beam.Scope, cfg Config) (runners.Job, error) {
		return runners.Job{Describe: []any{"source", cfg.Source}}, build(ctx, s, cfg)
	},
	Summary: summary,
}

func main() { runners.Main(pipeline) }

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return pipeline.Run(args, getenv, stdout, stderr)
}

func summary(ctx context.Context, stdout io.Writer, cfg Config, _ time.Duration) error {
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		return err
	}
	for _, id := range []string{cfg.DailyTable, cfg.TermsTable} {
		st, err := icebergio.Stat(ctx, cat, id, cfg.Pipeline)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-30s %6d rows  %3d snapshots\n", id, st.Rows, st.Snapshots)
	}
	return nil
}

// build wires new silver snapshots -> the days they touch -> every silver
// row of those days -> per-source counts and trending terms -> overwrite.
func build(ctx context.Context, s beam.Scope, cfg Config) error {
	daily, err := icebergio.Open(ctx, cfg.Catalog, tables.GoldSourceDaily.As(cfg.DailyTable), cfg.Pipeline)
	if err != nil {
		return err
	}
	terms, err := icebergio.Open(ctx, cfg.Catalog, tables.GoldTrendingTerms.As(cfg.TermsTable), cfg.Pipeline)
	if err != nil {
		return err
	}
	touched, progress, err := snapshots.ChangedDays(ctx, s, cfg.Catalog, cfg.Source, tables.SilverEvent{}, "timestamp", daily, terms)
	if err != nil {
		return fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	days := snapshots.ReadDayBatches(s, cfg.Catalog, cfg.Source, gold.DayRows{}, "timestamp", touched)
	icebergio.OverwriteDays(s, daily, "day", progress, gold.SourceDailyCounts(s, days))
	icebergio.OverwriteDays(s, terms, "hour", progress, gold.TrendingTerms(s, days, cfg.TopTerms))
	return nil
}
