package icebergio

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/iceberg-go/codec"

	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

type bronzeBatch struct {
	r    offsets.Range
	rows []tables.BronzeEvent
}

func (b bronzeBatch) Range() offsets.Range  { return b.r }
func (b bronzeBatch) RowSlice() any         { return b.rows }
func (b bronzeBatch) RowOffset(i int) int64 { return b.rows[i].KafkaOffset }

// BenchmarkWriterBundle measures the writer as a backlog drives it: each
// iteration is one bundle of a million bronze rows, in batches of 4096, into
// one window: Arrow appends, four background Parquet writes to a file
// warehouse, and the FileSet. Bytes allocated per row are the figure to
// watch: allocation is a quarter of a backlog's CPU with the collector.
func BenchmarkWriterBundle(b *testing.B) {
	b.Run("dict=all", func(b *testing.B) { benchWriterBundle(b, nil) })
	b.Run("dict=no-unique", func(b *testing.B) {
		benchWriterBundle(b, map[string]string{
			"write.parquet.dict-encoding-enabled.column.kafka_offset":    "false",
			"write.parquet.dict-encoding-enabled.column.timestamp":       "false",
			"write.parquet.dict-encoding-enabled.column.kafka_timestamp": "false",
		})
	})
}

func benchWriterBundle(b *testing.B, props map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f := fileWriter(ctx, b, tables.Table{Ident: "ns.bundle", Row: tables.BronzeEvent{}, Properties: props})

	const rowsPerBundle, batch = 1 << 20, 4096
	sources := []string{"news", "Reuters", "FT", "sec-filings"}
	titles := make([]string, 64)
	for i := range titles {
		titles[i] = fmt.Sprintf("Debt market update %d", i)
	}
	batches := make([]bronzeBatch, rowsPerBundle/batch)
	ts := time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC).UnixMicro()
	for bi := range batches {
		rs := make([]tables.BronzeEvent, batch)
		for i := range rs {
			o := int64(bi*batch + i)
			k := ts + o
			rs[i] = tables.BronzeEvent{Source: &sources[o%4], Title: &titles[o%64], Timestamp: ts + o, IngestedAt: ts + o,
				KafkaTopic: "fintech.debt.raw", KafkaOffset: o, KafkaTimestamp: &k}
		}
		batches[bi] = bronzeBatch{r: offsets.Range{Topic: "fintech.debt.raw", Start: int64(bi * batch), End: int64((bi + 1) * batch)}, rows: rs}
	}
	w := window.IntervalWindow{Start: mtime.FromMilliseconds(0), End: mtime.FromMilliseconds(1000)}
	var fileBytes int64
	emit := func(_ beam.EventTime, fs FileSet) { fileBytes += fs.Bytes }
	b.ReportAllocs()
	for b.Loop() {
		f.StartBundle(ctx, emit)
		for _, bb := range batches {
			if err := f.ProcessElement(ctx, w, w.Start, bb, emit); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.FinishBundle(ctx, emit); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*rowsPerBundle/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(fileBytes)/float64(b.N)/rowsPerBundle, "file-B/row")
}

// TestBronzeUniqueColumnsHaveNoDictionary checks that the bronze table is
// created with dictionary encoding off for the offset and the two
// timestamps, whose values are all distinct, and that its files are what
// they were with it on: those columns plain (the cost-based fallback gave
// their dictionary up anyway, after hashing every value of the first page,
// which is the work the property saves), and source, a handful of values,
// still dictionary-encoded.
func TestBronzeUniqueColumnsHaveNoDictionary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := fileWriter(ctx, t, tables.Bronze.As("ns.bronze"))
	for _, c := range []string{"timestamp", "kafka_offset", "kafka_timestamp"} {
		if v := f.tbl.Properties()["write.parquet.dict-encoding-enabled.column."+c]; v != "false" {
			t.Errorf("table property for %s's dictionary %q, want false", c, v)
		}
	}
	sources := []string{"news", "FT"}
	rs := make([]tables.BronzeEvent, 10000)
	for i := range rs {
		ts := int64(1_700_000_000_000_000 + i*1000)
		rs[i] = tables.BronzeEvent{Source: &sources[i%2], Timestamp: ts, IngestedAt: ts, KafkaTopic: "t", KafkaOffset: int64(i), KafkaTimestamp: &ts}
	}
	w := window.IntervalWindow{Start: mtime.FromMilliseconds(0), End: mtime.FromMilliseconds(1000)}
	var files [][]byte
	emit := func(_ beam.EventTime, fs FileSet) { files = append(files, fs.Files...) }
	f.StartBundle(ctx, emit)
	if err := f.ProcessElement(ctx, w, w.Start, bronzeBatch{r: offsets.Range{Topic: "t", End: int64(len(rs))}, rows: rs}, emit); err != nil {
		t.Fatal(err)
	}
	if err := f.FinishBundle(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	df, err := codec.DecodeDataFile(files[0], f.tbl.Spec(), f.tbl.Schema(), f.tbl.Metadata().Version())
	if err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(strings.TrimPrefix(df.FilePath(), "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string]bool{"timestamp": false, "kafka_offset": false, "kafka_timestamp": false, "source": true}
	rg := r.MetaData().RowGroup(0)
	for i := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		name := cc.PathInSchema().String()
		if w, ok := want[name]; ok {
			if got := cc.HasDictionaryPage(); got != w {
				t.Errorf("column %s: dictionary page %v, want %v", name, got, w)
			}
			delete(want, name)
		}
	}
	if len(want) > 0 {
		t.Errorf("columns %v not in the file", want)
	}
}
