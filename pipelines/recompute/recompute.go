// Package recompute is the pipeline that keeps a table of aggregates over
// another table by whole days. Each run reads the snapshots appended to the
// source table since its last run, finds the days (of a timestamp column)
// that their rows touched, reads those days whole, computes the output rows
// for them, and overwrites the same days of the output table, recording the
// source's last snapshot as its progress in that commit. A rerun with
// nothing new changes nothing; a run after more appends recomputes only the
// days they touched.
//
// A pipeline of this kind is its output row, its computation and a Days:
//
//	var pipeline = recompute.Days{Name: "sourcecounts",
//		Source: tables.Bronze, SourceDay: "ingested_at",
//		Table: sourceHourly, TableDay: "hour", Compute: counts}.Pipeline()
//
//	func main() { runners.Main(pipeline) }
//
// pipelines/examples/sourcecounts is that example in full.
package recompute

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/lineage/icetables"
	"github.com/haade/haade/transforms/tables"
)

// Config is the command line of a Days pipeline; every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	runners.Common // --runner, --pipeline-id, --metrics-addr, --lineage...
	Catalog        icebergio.CatalogConfig
	// Source and Table are the tables read and written, "namespace.table"
	// (--source and --table).
	Source, Table string
}

// Days describes a pipeline that recomputes whole days of Table from the
// days of Source that changed.
type Days struct {
	// Name is the command's name and the default --pipeline-id.
	Name string
	// Source is the table read: its Ident is --source's default, and its
	// Row the type of the rows Compute gets. SourceDay is its timestamp
	// column whose days are recomputed.
	Source    tables.Table
	SourceDay string
	// Table is the table written: its Ident is --table's default, its Row
	// the type of the rows Compute returns. TableDay is its timestamp
	// column: each recomputed day replaces the rows of that day.
	Table    tables.Table
	TableDay string
	// Compute makes the rows of Table from the rows of the days read,
	// PCollection<Source.Row> to PCollection<Table.Row>. It gets every row
	// of each day it must return rows for, and nothing else.
	Compute func(s beam.Scope, rows beam.PCollection) beam.PCollection
}

// Pipeline is d as a command for runners.Main.
func (d Days) Pipeline() runners.Pipeline[Config] {
	return runners.Pipeline[Config]{Name: d.Name, Flags: d.flags, Lineage: lineageOf, Build: d.Build}
}

func (d Days) flags(fs *flag.FlagSet) func() (Config, error) {
	common := runners.CommonFlags(fs, runners.Defaults{Pipeline: d.Name})
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", d.Source.Ident, "table to read, namespace.table")
	table := fs.String("table", d.Table.Ident, "table to write, namespace.table")
	return func() (Config, error) {
		c, err := common()
		return Config{Common: c, Catalog: catalog(), Source: *source, Table: *table}, err
	}
}

func lineageOf(cfg Config, lin *lineage.Command) {
	lin.InputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Source)
	lin.OutputTables = icetables.Of(cfg.Catalog, cfg.Pipeline, cfg.Table)
}

// Build adds the pipeline to s: the days of cfg.Source changed since
// cfg.Table's progress, read whole, Compute, and the overwrite of those
// days of cfg.Table with the new progress. It creates cfg.Table when it is
// not there.
func (d Days) Build(ctx context.Context, s beam.Scope, cfg Config) (runners.Job, error) {
	if d.Compute == nil || d.Source.Row == nil || d.Table.Row == nil || d.SourceDay == "" || d.TableDay == "" {
		return runners.Job{}, errors.New("recompute: Days needs Source and Table with their rows, SourceDay, TableDay and Compute")
	}
	out, err := icebergio.Open(ctx, cfg.Catalog, d.Table.As(cfg.Table), cfg.Pipeline)
	if err != nil {
		return runners.Job{}, err
	}
	days, progress, err := snapshots.ChangedDays(ctx, s, cfg.Catalog, cfg.Source, d.Source.Row, d.SourceDay, out)
	if err != nil {
		return runners.Job{}, fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	rows := snapshots.ReadDays(s, cfg.Catalog, cfg.Source, d.Source.Row, d.SourceDay, days)
	icebergio.OverwriteDays(s, out, d.TableDay, progress, d.Compute(s, rows))
	return runners.Job{}, nil
}
