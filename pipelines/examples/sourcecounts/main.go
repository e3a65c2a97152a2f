// Command sourcecounts is the example of a pipeline that reads a table: it
// counts the bronze events of each source in each hour of ingestion, into
// lakehouse.source_hourly. Each run reads the bronze snapshots appended
// since its last run, recounts the days they touch, and overwrites those
// days, so a rerun changes nothing.
//
//	go run ./pipelines/examples/sourcecounts
package main

import (
	"context"
	"flag"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/tables"
)

// sourceHourly is this pipeline's table, as a value of the table layer.
var sourceHourly = tables.Table{Ident: "lakehouse.source_hourly", Row: SourceHour{},
	Partition: []tables.PartitionField{{Column: "hour", Transform: "day"}}}

// SourceHour is a row of lakehouse.source_hourly; without Events, the key
// an event is counted by.
type SourceHour struct {
	Hour   int64  `iceberg:"hour,required,timestamptz"`
	Source string `iceberg:"source,required"`
	Events int64  `iceberg:"events,required"`
}

// Config is the command line; every flag can also be set as HAADE_<FLAG>.
type Config struct {
	runners.Common // --runner, --pipeline-id, --metrics-addr, --lineage...
	Catalog        icebergio.CatalogConfig
	Source, Table  string
}

func flags(fs *flag.FlagSet) func() (Config, error) {
	common := runners.CommonFlags(fs, runners.Defaults{Pipeline: "sourcecounts"})
	catalog := icebergio.CatalogFlags(fs)
	source := fs.String("source", tables.Bronze.Ident, "bronze table to read")
	tbl := fs.String("table", sourceHourly.Ident, "table of counts per source and hour")
	return func() (Config, error) {
		c, err := common()
		return Config{Common: c, Catalog: catalog(), Source: *source, Table: *tbl}, err
	}
}

func build(ctx context.Context, s beam.Scope, cfg Config) (runners.Job, error) {
	out, err := icebergio.Open(ctx, cfg.Catalog, sourceHourly.As(cfg.Table), cfg.Pipeline)
	if err != nil {
		return runners.Job{}, err
	}
	days, progress, err := snapshots.ChangedDays(ctx, s, cfg.Catalog, cfg.Source, tables.BronzeEvent{}, "ingested_at", out)
	if err != nil {
		return runners.Job{}, fmt.Errorf("--source=%s: %w", cfg.Source, err)
	}
	events := snapshots.ReadDays(s, cfg.Catalog, cfg.Source, tables.BronzeEvent{}, "ingested_at", days)
	icebergio.OverwriteDays(s, out, "hour", progress, counts(s, events))
	return runners.Job{}, nil
}

// counts returns PCollection<SourceHour>: PCollection<tables.BronzeEvent>
// counted per source and hour of ingestion.
func counts(s beam.Scope, events beam.PCollection) beam.PCollection {
	return beam.ParDo(s, withEvents, stats.Count(s, beam.ParDo(s, hourAndSource, events)))
}

// hourAndSource is the row an event is counted in, with no count yet.
func hourAndSource(e tables.BronzeEvent) SourceHour {
	k := SourceHour{Hour: e.IngestedAt - e.IngestedAt%3_600_000_000, Source: "(none)"}
	if e.Source != nil {
		k.Source = *e.Source
	}
	return k
}

func withEvents(k SourceHour, n int) SourceHour {
	k.Events = int64(n)
	return k
}

func init() {
	beam.RegisterType(reflect.TypeOf((*SourceHour)(nil)).Elem())
	beam.RegisterFunction(hourAndSource)
	beam.RegisterFunction(withEvents)
}

var pipeline = runners.Pipeline[Config]{Name: "sourcecounts", Flags: flags, Build: build}

func main() { runners.Main(pipeline) }
