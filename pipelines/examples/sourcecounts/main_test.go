package main

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/pipelines/recompute"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

var t0 = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC)

func event(source string, at time.Duration) tables.BronzeEvent {
	e := tables.BronzeEvent{Timestamp: t0.UnixMicro(), IngestedAt: t0.Add(at).UnixMicro(), KafkaTopic: "fintech.debt.raw"}
	if source != "" {
		e.Source = &source
	}
	return e
}

func hour(h int) int64 { return t0.Add(time.Duration(h) * time.Hour).UnixMicro() }

func TestCounts(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, []tables.BronzeEvent{event("news", 0), event("news", 59*time.Minute), event("FT", time.Minute),
		event("news", time.Hour), event("", 2*time.Hour)})
	passert.Equals(s, counts(s, in),
		SourceHour{Hour: hour(0), Source: "news", Events: 2}, SourceHour{Hour: hour(0), Source: "FT", Events: 1},
		SourceHour{Hour: hour(1), Source: "news", Events: 1}, SourceHour{Hour: hour(2), Source: "(none)", Events: 1})
	ptest.RunAndValidate(t, p)
}

// The pipeline reads bronze's appended snapshots, recounts the days they
// touch, and a rerun after more rows recounts only what changed.
func TestBuildOverBronzeSnapshots(t *testing.T) {
	dir := t.TempDir()
	cfg := recompute.Config{Common: runners.Common{Pipeline: "sourcecounts"}, Catalog: icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "catalog.db"),
		Warehouse: filepath.Join(dir, "warehouse")}, Source: "lakehouse.bronze_events", Table: "lakehouse.source_hourly"}
	appendBronze(t, cfg, event("news", 0), event("FT", time.Minute))
	appendBronze(t, cfg, event("news", 2*time.Minute))
	run(t, cfg)
	want := []SourceHour{{Hour: hour(0), Source: "FT", Events: 1}, {Hour: hour(0), Source: "news", Events: 2}}
	check(t, cfg, want)

	appendBronze(t, cfg, event("FT", 3*time.Minute), event("news", time.Hour))
	run(t, cfg)
	want = []SourceHour{{Hour: hour(0), Source: "FT", Events: 2}, {Hour: hour(0), Source: "news", Events: 2},
		{Hour: hour(1), Source: "news", Events: 1}}
	check(t, cfg, want)
	run(t, cfg) // nothing new
	check(t, cfg, want)
}

func run(t *testing.T, cfg recompute.Config) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if _, err := pipeline.Build(context.Background(), s, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := runners.Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, cfg recompute.Config, want []SourceHour) {
	t.Helper()
	var got []SourceHour
	if err := icebergio.ScanRows(context.Background(), cfg.Catalog, cfg.Table, &got); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool {
		return got[i].Hour < got[j].Hour || got[i].Hour == got[j].Hour && got[i].Source < got[j].Source
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", cfg.Table, diff)
	}
}

// appendBronze commits rows to the bronze table in one append snapshot.
func appendBronze(t *testing.T, cfg recompute.Config, rows ...tables.BronzeEvent) {
	t.Helper()
	ctx := context.Background()
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: cfg.Source, Row: tables.BronzeEvent{},
		Partition: []tables.PartitionField{{Column: "ingested_at", Transform: "day"}}})
	if err != nil {
		t.Fatal(err)
	}
	icebergtest.Append(t, tbl, rows, nil)
}

// The command, through runners.Main's harness: flags and environment, the
// run, the exit code; a bad flag is one line that names it, and exit 2.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := recompute.Config{Common: runners.Common{Pipeline: "sourcecounts"}, Catalog: icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "catalog.db"),
		Warehouse: filepath.Join(dir, "warehouse")}, Source: "lakehouse.bronze_events", Table: "lakehouse.source_hourly"}
	appendBronze(t, cfg, event("news", 0), event("news", time.Minute))
	env := map[string]string{"HAADE_WAREHOUSE": cfg.Catalog.Warehouse}
	var stdout, stderr strings.Builder
	code := pipeline.Run([]string{"--catalog-uri=" + cfg.Catalog.URI}, func(k string) string { return env[k] }, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	check(t, cfg, []SourceHour{{Hour: hour(0), Source: "news", Events: 2}})

	stderr.Reset()
	if code := pipeline.Run([]string{"--runner=spark"}, func(string) string { return "" }, &stdout, &stderr); code != 2 {
		t.Errorf("--runner=spark: exit %d, want 2", code)
	}
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "sourcecounts: ") || !strings.Contains(got, "--runner") {
		t.Errorf("--runner=spark: stderr %q, want one line naming --runner", got)
	}
}
