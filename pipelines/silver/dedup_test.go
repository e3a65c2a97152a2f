package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/silver"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.Function1x1(titlesOf)
}

func titlesOf(b silver.Batch) string {
	s := b.Source.String() + ":"
	for _, r := range b.Rows {
		s += " " + r.Title
	}
	return s
}

// TestDedupSeedsFromTheTable: a row already in the silver table is a
// duplicate, as is a later row of the same run.
func TestDedupSeedsFromTheTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat := icebergio.CatalogConfig{URI: filepath.Join(dir, "c.db"), Warehouse: filepath.Join(dir, "w")}
	sink, err := icebergio.Open(ctx, cat, tables.Silver.As("lakehouse.silver"), "test")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC).UnixMicro()
	{ // the table holds "A" already
		p, s := beam.NewPipelineWithRoot()
		held := silver.Batch{Source: offsets.Range{Topic: "iceberg:b", Start: 1, End: 2},
			Rows: []tables.SilverEvent{{Source: "news", Title: "A", Timestamp: base, IngestedAt: base}}}
		start := offsets.Offsets{}
		start.Set("iceberg:b", 0, 1)
		icebergio.Write(s, sink, start, beam.Create(s, held))
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
	}
	r1 := offsets.Range{Topic: "iceberg:b", Start: 2, End: 3}
	r2 := offsets.Range{Topic: "iceberg:b", Start: 3, End: 4}
	in := []silver.Batch{
		{Source: r1, Rows: []tables.SilverEvent{
			{Source: "news", Title: "A", Timestamp: base, IngestedAt: base + 10}, // in the table
			{Source: "news", Title: "B", Timestamp: base, IngestedAt: base + 11},
			{Source: "ft", Title: "C", Timestamp: base, IngestedAt: base + 12}}},
		{Source: r2, Rows: []tables.SilverEvent{
			{Source: "news", Title: "B", Timestamp: base, IngestedAt: base + 20}, // of this run
			{Source: "ft", Title: "D", Timestamp: base, IngestedAt: base + 21}}},
	}
	p, s := beam.NewPipelineWithRoot()
	out := dedup(s, beam.CreateList(s, in), cat, "lakehouse.silver", time.Hour)
	passert.Equals(s, beam.ParDo(s, titlesOf, out), "iceberg:b/0[2,3): B C", "iceberg:b/0[3,4): D")
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
