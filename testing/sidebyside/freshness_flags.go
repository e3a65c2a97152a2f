package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// FreshConfig is the freshness mode's part of the command line.
type FreshConfig struct {
	Freshness    bool
	Rates        []int
	Duration     time.Duration
	DrainTimeout time.Duration
	MaxEndLag    time.Duration
	MaxSlope     float64
	FreshOut     string
	FreshChart   string
}

func (c Config) flatRule() flatRule {
	return flatRule{MaxSlope: c.MaxSlope, MaxEndLag: c.MaxEndLag.Seconds()}
}

// addFreshFlags defines the freshness flags on fs; the function it returns
// validates them after fs.Parse.
func addFreshFlags(fs *flag.FlagSet, c *Config) func() error {
	fs.BoolVar(&c.Freshness, "freshness", false, "measure freshness under a steady stream instead of a backlog: each contender streams while a paced producer sends --rates events/s for --duration")
	rate := fs.Int("rate", 0, "one rate, events/s, for --freshness (the same as --rates=N)")
	rates := fs.String("rates", "20000,50000", "comma-separated rates, events/s, for --freshness: each contender runs at each in increasing order until its lag is not flat, and the highest that was is reported")
	fs.DurationVar(&c.Duration, "duration", 3*time.Minute, "how long the producer sends, per contender and rate, with --freshness")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", 2*time.Minute, "how long after the producer ends every record must be visible, with --freshness; a run that does not drain is not sustainable")
	fs.DurationVar(&c.MaxEndLag, "max-end-lag", 10*time.Second, "lag flat: the end lag (mean per-second maximum over the last tenth) at most this, with --freshness")
	fs.Float64Var(&c.MaxSlope, "max-slope", 0.05, "lag flat: the per-second maximum lag grows at most this many seconds per second over the last third, with --freshness")
	fs.StringVar(&c.FreshOut, "fresh-out", "docs/benchmarks/results/freshness.json", "where --freshness's results go, as JSON; empty writes none")
	fs.StringVar(&c.FreshChart, "fresh-chart", "docs/benchmarks/freshness.png", "where --freshness's chart of freshness over time goes, as PNG; empty draws none")
	return func() error {
		list := *rates
		if *rate != 0 {
			list = strconv.Itoa(*rate)
		}
		c.Rates = nil
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				if *rate != 0 {
					return fmt.Errorf("--rate=%d: want > 0", *rate)
				}
				return fmt.Errorf("--rates=%q: want positive events/s, comma-separated", *rates)
			}
			c.Rates = append(c.Rates, n)
		}
		switch {
		case c.Duration < 10*time.Second:
			return fmt.Errorf("--duration=%v: want >= 10s", c.Duration)
		case c.DrainTimeout <= 0:
			return fmt.Errorf("--drain-timeout=%v: want > 0", c.DrainTimeout)
		case c.MaxEndLag <= 0:
			return fmt.Errorf("--max-end-lag=%v: want > 0", c.MaxEndLag)
		case c.MaxSlope <= 0:
			return fmt.Errorf("--max-slope=%v: want > 0", c.MaxSlope)
		}
		return nil
	}
}

// runFreshness is run for --freshness: measure, or read --from, then write
// the JSON, the chart and the table.
func runFreshness(ctx context.Context, cfg Config) error {
	var rep FreshReport
	if cfg.From != "" {
		b, err := os.ReadFile(cfg.From)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", cfg.From, err)
		}
	} else {
		root, err := cmdtest.RepoRoot()
		if err != nil {
			return err
		}
		rep, err = measureFreshness(ctx, cfg, root)
		if err != nil && len(rep.Results) == 0 {
			return err
		}
		rep.Sustainable = sustainable(rep.Results)
		if cfg.FreshOut != "" {
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(cfg.FreshOut, append(b, '\n'), 0o644); err != nil {
				return err
			}
			logf("wrote %s", cfg.FreshOut)
		}
		if err != nil {
			return fmt.Errorf("%w (the %d runs before it are in --fresh-out, if set)", err, len(rep.Results))
		}
	}
	if cfg.FreshChart != "" {
		if err := writeFreshChart(cfg.FreshChart, rep); err != nil {
			return err
		}
		logf("drew %s", cfg.FreshChart)
	}
	fmt.Print(freshMarkdown(rep))
	return nil
}
