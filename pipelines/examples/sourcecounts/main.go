// Command sourcecounts is the example of a pipeline that reads a table: it
// counts the bronze events of each source in each hour of ingestion, into
// lakehouse.source_hourly. Each run reads the bronze snapshots appended
// since its last run, recounts the days they touch, and overwrites those
// days, so a rerun changes nothing.
//
//	go run ./pipelines/examples/sourcecounts
package main

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/haade/haade/pipelines/recompute"
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

var pipeline = recompute.Days{Name: "sourcecounts", Source: tables.Bronze, SourceDay: "ingested_at",
	Table: sourceHourly, TableDay: "hour", Compute: counts}.Pipeline()

func main() { runners.Main(pipeline) }
