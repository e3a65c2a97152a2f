package tables

import "github.com/haade/haade/transforms/offsets"

// Table is a table: where it lives, what a row is, how it is partitioned.
// It is the one shape of a table, for HAADE's own (the values below) and
// any other a pipeline writes: io/icebergio.Open and EnsureTable take it.
type Table struct {
	// Ident is the identifier, "namespace.table" (for the values below,
	// the default one). Namespace levels never contain dots.
	Ident string
	// Row is a zero value of the row struct, whose fields carry `iceberg`
	// tags (see io/icebergio/rows.SchemaOf).
	Row any
	// Partition lists the partition fields, e.g. {{"ingested_at", "day"}}.
	// Nil: unpartitioned.
	Partition []PartitionField
	// Properties are table properties set when the table is created, over
	// io/icebergio.DefaultProperties.
	Properties map[string]string
}

// PartitionField partitions a table by Transform ("identity", "day",
// "hour", "month", "year", "bucket[N]", "truncate[W]") of Column.
type PartitionField struct {
	Column    string
	Transform string
}

// As returns the same table under identifier ident (for a --table flag).
// An empty ident keeps the default.
func (t Table) As(ident string) Table {
	if ident != "" {
		t.Ident = ident
	}
	return t
}

// The tables of HAADE (docs/DESIGN.md, "Tables").
var (
	// Bronze holds every record of the topic that parsed.
	Bronze = Table{Ident: "lakehouse.bronze_events", Row: BronzeEvent{}, Partition: byDay("ingested_at"),
		Properties: noDictionary("timestamp", "kafka_offset", "kafka_timestamp")}
	// DeadLetters holds every record of the topic that did not parse.
	DeadLetters = Table{Ident: "lakehouse.bronze_events_dlq", Row: DeadLetter{}, Partition: byDay("ingested_at")}
	// Silver holds bronze cleaned and deduplicated.
	Silver = Table{Ident: "lakehouse.silver_events", Row: SilverEvent{}, Partition: byDay("timestamp"),
		Properties: noDictionary("timestamp", "kafka_offset")}
	// SilverRejects holds the bronze rows that silver refused, with the reason.
	SilverRejects = Table{Ident: "lakehouse.silver_rejects", Row: SilverReject{}}
	// GoldSourceDaily holds the events per source per day.
	GoldSourceDaily = Table{Ident: "lakehouse.gold_source_daily", Row: SourceDaily{},
		Partition: []PartitionField{{Column: "day", Transform: "identity"}}}
	// GoldTrendingTerms holds the top terms of each hour's titles.
	GoldTrendingTerms = Table{Ident: "lakehouse.gold_trending_terms", Row: TrendingTerm{}, Partition: byDay("hour")}
)

// noDictionary turns Parquet dictionary encoding off for columns whose
// values are (nearly) all distinct: a Kafka offset, a record's or an
// event's timestamp. Their dictionary would be given up for plain encoding
// after the first page anyway (the cost-based fallback), but until then
// every value goes through a hash table that grows with the page: a tenth
// of the writer's time on a backlog, for the same files.
func noDictionary(columns ...string) map[string]string {
	p := map[string]string{}
	for _, c := range columns {
		p["write.parquet.dict-encoding-enabled.column."+c] = "false"
	}
	return p
}

func byDay(column string) []PartitionField {
	return []PartitionField{{Column: column, Transform: "day"}}
}

// BronzeSnapshot is the bronze rows that one append snapshot added, as
// decoded by io/icebergio/snapshots.SnapshotBatches: Range covers the snapshot
// sequence numbers since the previous snapshot read (topic
// "iceberg:<table>", partition 0), so batches derived from it record where
// a reader of bronze is.
type BronzeSnapshot struct {
	Range      offsets.Range
	SnapshotID int64
	Rows       []BronzeEvent
}
