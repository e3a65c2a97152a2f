package icebergio_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// TestMain runs pipelines on Prism (ptest's default), in process, so that
// a function set at inject.BeforeCommit reaches the committer.
func TestMain(m *testing.M) { ptest.Main(m) }

func init() {
	beam.RegisterType(reflect.TypeOf((*Row)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*RowBatch)(nil)).Elem())
}

// Row is the row type of the test tables.
type Row struct {
	Key       string  `iceberg:"key,required"`
	Note      *string `iceberg:"note"`
	Payload   []byte  `iceberg:"payload"`
	At        int64   `iceberg:"at,required,timestamptz"`
	Topic     string  `iceberg:"topic,required"`
	Partition int32   `iceberg:"partition,required"`
	Offset    int64   `iceberg:"offset,required"`
}

// RowBatch is a Batch of Rows, with the event time (milliseconds) that
// the pipeline tests stamp it with.
type RowBatch struct {
	Src       offsets.Range
	Rows      []Row
	EventTime int64
}

func (b RowBatch) Range() offsets.Range  { return b.Src }
func (b RowBatch) RowSlice() any         { return b.Rows }
func (b RowBatch) RowOffset(i int) int64 { return b.Rows[i].Offset }

const (
	topic    = "events"
	pipeline = "test-pipeline"
)

// base is the start of the first window of every test.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// windowEnd returns the end of window n (1-based) of 1s windows.
func windowEnd(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// batch returns the batch of partition p covering offsets [start, end), with
// one row per offset except those in gaps (aborted records, markers), and
// stamped inside window n. Rows vary nulls: a nil Note on even offsets, a
// nil Payload when offset%3 == 0 and an empty one when offset%3 == 1.
func batch(window int, p int32, start, end int64, gaps ...int64) RowBatch {
	b := RowBatch{Src: offsets.Range{Topic: topic, Partition: p, Start: start, End: end},
		EventTime: windowEnd(window).Add(-500 * time.Millisecond).UnixMilli()}
	skip := map[int64]bool{}
	for _, g := range gaps {
		skip[g] = true
	}
	for off := start; off < end; off++ {
		if skip[off] {
			continue
		}
		r := Row{Key: fmt.Sprintf("%d/%d", p, off), At: base.UnixMicro() + off, Topic: topic, Partition: p, Offset: off}
		if off%2 == 1 {
			n := fmt.Sprintf("note %d", off)
			r.Note = &n
		}
		switch off % 3 {
		case 1:
			r.Payload = []byte{}
		case 2:
			r.Payload = []byte(r.Key)
		}
		b.Rows = append(b.Rows, r)
	}
	return b
}

// rowsOf returns every row of the batches.
func rowsOf(bs ...RowBatch) []Row {
	var out []Row
	for _, b := range bs {
		out = append(out, b.Rows...)
	}
	return out
}

// sortRows makes cmp compare rows as a set (with multiplicity).
var sortRows = cmpopts.SortSlices(func(a, b Row) bool { return a.Key < b.Key })

// testTable returns a fresh catalog with table ns.<name> of Rows, created by
// icebergio.Open as a pipeline would.
func testTable(t *testing.T, name string) (*icebergio.Sink, catalog.Catalog) {
	t.Helper()
	cfg, cat := icebergtest.Catalog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink, err := icebergio.Open(ctx, cfg, tables.Table{Ident: "ns." + name, Row: Row{}}, pipeline)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	sink.Interval = time.Second
	return sink, cat
}
