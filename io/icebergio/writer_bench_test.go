package icebergio_test

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	icerows "github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/tables"
)

// benchRows returns n rows of bronze's own row type, so that these
// benchmarks measure the bronze layout, shaped like the sample events of
// kafkatest: a few sources, a few dozen titles, one in ten with extra members
// or a null title, all ingested on one day, with the Kafka columns a record
// without key or headers gives (parse.Row).
func benchRows(n int) []tables.BronzeEvent {
	sources := []string{"news", "Reuters", " bloomberg ", "FT", "sec-filings", "twitter", "central-bank", "rating-agency"}
	nouns := []string{"Debt market", "Sovereign bond", "Corporate credit", "High-yield", "Municipal debt", "Treasury", "Emerging-market debt", "Leveraged loan"}
	verbs := []string{"update", "downgrade", "upgrade", "default warning", "issuance", "refinancing", "yield spike", "restructuring"}
	var titles []string
	for _, n := range nouns {
		for _, v := range verbs {
			titles = append(titles, n+" "+v)
		}
	}
	base := time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC).UnixMicro()
	ingested := time.Date(2026, 5, 20, 9, 0, 0, 0, time.UTC).UnixMicro()
	r := rand.New(rand.NewPCG(1, 2))
	createTime := "CreateTime"
	rows := make([]tables.BronzeEvent, n)
	for i := range rows {
		kts := ingested - r.Int64N(5_000_000)
		row := tables.BronzeEvent{
			Source: &sources[r.IntN(len(sources))], Title: &titles[r.IntN(len(titles))],
			Timestamp: base + int64(i)*1_000_000 + r.Int64N(1000)*1000, IngestedAt: ingested + int64(i/4096)*1000,
			KafkaTopic: "fintech.debt.raw", KafkaPartition: int32(i % 8), KafkaOffset: int64(i / 8), KafkaTimestamp: &kts,
			KafkaTimestampType: &createTime,
		}
		switch r.IntN(10) {
		case 0:
			e := fmt.Sprintf(`{"amount_musd":%d,"currency":"USD"}`, r.IntN(5000))
			row.Extra = &e
		case 1:
			row.Title = nil
		}
		rows[i] = row
	}
	return rows
}

// BenchmarkAppend measures rows -> Arrow through the appender that Write
// uses (rows.RowBuilder): n rows per record batch, appended in one call, or
// in calls of 1024 rows as a window's buffer takes Kafka batches.
func BenchmarkAppend(b *testing.B) {
	sc, err := icerows.SchemaOf(tables.BronzeEvent{})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ n, batch int }{{4096, 4096}, {65536, 65536}, {65536, 1024}} {
		name := fmt.Sprintf("rows=%d", tc.n)
		if tc.batch < tc.n {
			name += fmt.Sprintf("/batch=%d", tc.batch)
		}
		b.Run(name, func(b *testing.B) {
			rows := benchRows(tc.n)
			rb, err := icerows.NewRowBuilder(nil, sc, tables.BronzeEvent{})
			if err != nil {
				b.Fatal(err)
			}
			defer rb.Release()
			b.ReportAllocs()
			for b.Loop() {
				for lo := 0; lo < tc.n; lo += tc.batch {
					if err := rb.Append(rows[lo:min(lo+tc.batch, tc.n)]); err != nil {
						b.Fatal(err)
					}
				}
				rb.NewRecordBatch().Release()
			}
			b.ReportMetric(float64(b.N)*float64(tc.n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkWriteRecords measures table.WriteRecords of one Arrow batch into
// zstd Parquet data files of a table in a temporary SQLite catalog, with the
// table properties of docs/DESIGN.md: day(ingested_at) partitioned as bronze,
// and unpartitioned. Nothing is committed.
func BenchmarkWriteRecords(b *testing.B) {
	for _, tc := range []struct {
		name string
		part []tables.PartitionField
	}{
		{"day-partitioned", []tables.PartitionField{{Column: "ingested_at", Transform: "day"}}},
		{"unpartitioned", nil},
	} {
		for _, n := range []int{65536, 1 << 20} {
			b.Run(fmt.Sprintf("%s/rows=%d", tc.name, n), func(b *testing.B) {
				ctx := context.Background()
				dir := b.TempDir()
				cc := icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
				cat, err := cc.Open(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if c, ok := cat.(catalog.Closer); ok {
					b.Cleanup(func() { c.Close() })
				}
				tbl, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: "bench.rows", Row: tables.BronzeEvent{}, Partition: tc.part})
				if err != nil {
					b.Fatal(err)
				}
				rb, err := icerows.NewRowBuilder(nil, tbl.Schema(), tables.BronzeEvent{})
				if err != nil {
					b.Fatal(err)
				}
				defer rb.Release()
				if err := rb.Append(benchRows(n)); err != nil {
					b.Fatal(err)
				}
				rec := rb.NewRecordBatch()
				defer rec.Release()
				var bytes int64
				b.ReportAllocs()
				for b.Loop() {
					rec.Retain() // WriteRecords releases what it consumes
					seq := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
					for df, err := range table.WriteRecords(ctx, tbl, rb.Schema(), iter.Seq2[arrow.RecordBatch, error](seq)) {
						if err != nil {
							b.Fatal(err)
						}
						bytes += df.FileSizeBytes()
					}
				}
				b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(bytes)/float64(b.N)/float64(n), "parquet-B/row")
			})
		}
	}
}
