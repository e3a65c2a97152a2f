package recompute_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/pipelines/recompute"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/tables"
)

// hourly is an output table for the tests; its rows are never made.
var hourly = tables.Table{Ident: "lakehouse.hourly", Row: struct {
	Hour int64 `iceberg:"hour,required,timestamptz"`
}{}}

func days() recompute.Days {
	return recompute.Days{Name: "hourly", Source: tables.Bronze, SourceDay: "ingested_at",
		Table: hourly, TableDay: "hour", Compute: func(_ beam.Scope, rows beam.PCollection) beam.PCollection { return rows }}
}

// The tables' idents are the flags' defaults, the name is the pipeline id's,
// and both flags and their HAADE_ variables override them.
func TestFlags(t *testing.T) {
	p := days().Pipeline()
	noEnv := func(string) string { return "" }
	cfg, err := runners.ParseConfig(runners.NewFlagSet(p.Name), nil, noEnv, p.Flags)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source != "lakehouse.bronze_events" || cfg.Table != "lakehouse.hourly" || cfg.Pipeline != "hourly" {
		t.Errorf("defaults: source %q, table %q, pipeline id %q", cfg.Source, cfg.Table, cfg.Pipeline)
	}
	env := map[string]string{"HAADE_TABLE": "gold.hourly"}
	cfg, err = runners.ParseConfig(runners.NewFlagSet(p.Name), []string{"--source=lakehouse.other"},
		func(k string) string { return env[k] }, p.Flags)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source != "lakehouse.other" || cfg.Table != "gold.hourly" {
		t.Errorf("overridden: source %q, table %q", cfg.Source, cfg.Table)
	}
}

// A Days with a part missing is refused before anything is opened or
// created: the catalog given would fail if Build reached it.
func TestBuildRefusesAnIncompleteDays(t *testing.T) {
	for name, edit := range map[string]func(*recompute.Days){
		"no Compute":    func(d *recompute.Days) { d.Compute = nil },
		"no source row": func(d *recompute.Days) { d.Source.Row = nil },
		"no table row":  func(d *recompute.Days) { d.Table.Row = nil },
		"no SourceDay":  func(d *recompute.Days) { d.SourceDay = "" },
		"no TableDay":   func(d *recompute.Days) { d.TableDay = "" },
	} {
		t.Run(name, func(t *testing.T) {
			d := days()
			edit(&d)
			_, s := beam.NewPipelineWithRoot()
			_, err := d.Build(context.Background(), s, recompute.Config{})
			if err == nil || !strings.Contains(err.Error(), "recompute: Days needs") {
				t.Fatalf("Build = %v, want the refusal that names what Days needs", err)
			}
		})
	}
}
