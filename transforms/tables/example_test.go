package tables_test

import (
	"fmt"

	"github.com/haade/haade/transforms/tables"
)

// A pipeline takes a table's value, under the identifier of its flag, and
// opens it with icebergio.Open(ctx, cat, t, pipeline).
func Example() {
	for _, t := range []tables.Table{tables.Bronze, tables.DeadLetters, tables.Silver.As("dev.silver_events"),
		tables.SilverRejects, tables.GoldSourceDaily, tables.GoldTrendingTerms} {
		fmt.Printf("%-30s %-20T %v\n", t.Ident, t.Row, t.Partition)
	}
	// Output:
	// lakehouse.bronze_events        tables.BronzeEvent   [{ingested_at day}]
	// lakehouse.bronze_events_dlq    tables.DeadLetter    [{ingested_at day}]
	// dev.silver_events              tables.SilverEvent   [{timestamp day}]
	// lakehouse.silver_rejects       tables.SilverReject  []
	// lakehouse.gold_source_daily    tables.SourceDaily   [{day identity}]
	// lakehouse.gold_trending_terms  tables.TrendingTerm  [{hour day}]
}
