package icebergio_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*KeyedRowBatch)(nil)).Elem())
	register.Function2x0(stampKeyed)
	register.Emitter2[beam.EventTime, KeyedRowBatch]()
}

// KeyedRowBatch is a RowBatch for an upsert table: Row.Key is the key, and
// Dels the keys it deletes.
type KeyedRowBatch struct {
	RowBatch
	Dels []offsets.KeyDelete
}

func (b KeyedRowBatch) Key(i int) string             { return b.Rows[i].Key }
func (b KeyedRowBatch) Deletes() []offsets.KeyDelete { return b.Dels }

func stampKeyed(b KeyedRowBatch, emit func(beam.EventTime, KeyedRowBatch)) {
	emit(beam.EventTime(b.EventTime), b)
}

// upsertSource is a keyed source: partition p's offset o writes key
// "k<o%keys>" (every key of a partition is in that partition only, as
// Kafka's partitioner keeps it) with note "p/o", except every offset in
// deletes, which deletes its key. It keeps, as the test's truth, each key's
// latest value.
type upsertSource struct {
	keys    int
	deletes map[int64]bool
	latest  map[string]string // key -> note, or "" when deleted
}

// batch returns partition p's offsets [start, end) as one batch stamped in
// window n.
func (u *upsertSource) batch(window int, p int32, start, end int64) KeyedRowBatch {
	b := KeyedRowBatch{RowBatch: RowBatch{Src: offsets.Range{Topic: topic, Partition: p, Start: start, End: end},
		EventTime: windowEnd(window).Add(-500 * time.Millisecond).UnixMilli()}}
	for off := start; off < end; off++ {
		key := fmt.Sprintf("p%d-k%d", p, off%int64(u.keys))
		if u.deletes[off] {
			b.Dels = append(b.Dels, offsets.KeyDelete{Key: key, Offset: off})
			delete(u.latest, key)
			continue
		}
		note := fmt.Sprintf("%d/%d", p, off)
		b.Rows = append(b.Rows, Row{Key: key, Note: &note, At: base.UnixMicro() + off, Topic: topic, Partition: p, Offset: off})
		u.latest[key] = note
	}
	return b
}

func upsertTable(t *testing.T, name string) *icebergio.Sink {
	t.Helper()
	cfg, _ := icebergtest.Catalog(t)
	sink, err := icebergio.Open(context.Background(), cfg, tables.Table{Ident: "ns." + name, Row: Row{},
		Properties: map[string]string{"write.delete.mode": "copy-on-write"}}, pipeline, icebergio.Upsert("key", "partition", "offset"))
	if err != nil {
		t.Fatal(err)
	}
	sink.Interval = time.Second
	return sink
}

// live returns key -> note of the table's current rows, failing on a key
// held twice.
func live(t *testing.T, sink *icebergio.Sink) map[string]string {
	t.Helper()
	var rows []Row
	if err := icebergio.ScanRows(context.Background(), sink.Catalog, sink.Table.Ident, &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		if _, dup := out[r.Key]; dup {
			t.Errorf("key %s is live twice", r.Key)
		}
		out[r.Key] = *r.Note
	}
	return out
}

func runUpsert(t *testing.T, sink *icebergio.Sink, start offsets.Offsets, batches []KeyedRowBatch) error {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	in := beam.ParDo(s, stampKeyed, beam.CreateList(s, batches))
	icebergio.Write(s, sink, start, in)
	return ptest.Run(p)
}

// Three windows of two partitions update 8 keys per partition over and
// over, with deletes, and a key written twice in one window by two
// batches: the table holds each key's latest row once, and no deleted key.
func TestUpsertKeepsTheLatestRowPerKey(t *testing.T) {
	sink := upsertTable(t, "upsert")
	u := &upsertSource{keys: 8, deletes: map[int64]bool{13: true, 22: true, 30: true}, latest: map[string]string{}}
	var in []KeyedRowBatch
	for w := 1; w <= 3; w++ {
		lo := int64(w-1) * 12
		for p := range int32(2) {
			// Two batches per partition and window: keys repeat across them.
			in = append(in, u.batch(w, p, lo, lo+6), u.batch(w, p, lo+6, lo+12))
		}
	}
	if err := runUpsert(t, sink, offsets.Offsets{topic: {0: 0, 1: 0}}, in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(u.latest, live(t, sink)); diff != "" {
		t.Errorf("live rows, key -> note (-want +got):\n%s", diff)
	}
	checkNoDeleteFiles(t, sink)
}

// A crash before the second window's commit, then the source from the
// start again: every window is committed once, and nothing is deleted
// twice or brought back.
func TestUpsertCrashThenReplay(t *testing.T) {
	sink := upsertTable(t, "upsert_crash")
	u := &upsertSource{keys: 5, deletes: map[int64]bool{7: true, 16: true}, latest: map[string]string{}}
	var in []KeyedRowBatch
	for w := 1; w <= 3; w++ {
		lo := int64(w-1) * 10
		in = append(in, u.batch(w, 0, lo, lo+10))
	}
	crash := errors.New("injected crash before commit")
	n := 0
	remove := inject.At(inject.BeforeCommit(sink.Table.Ident), func(icebergio.FileSet) error {
		n++
		if n == 2 {
			return crash
		}
		return nil
	})
	err := runUpsert(t, sink, offsets.Offsets{topic: {0: 0}}, in)
	remove()
	if err == nil {
		t.Fatal("the run with a crash before a commit succeeded")
	}
	// The next run starts where the table is, fed the source from its
	// start (a replay of what the first run committed).
	if err := runUpsert(t, sink, offsets.Offsets{topic: {0: 0}}, in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(u.latest, live(t, sink)); diff != "" {
		t.Errorf("live rows, key -> note (-want +got):\n%s", diff)
	}
}

// checkNoDeleteFiles asserts that the table holds no delete file: the
// upserts rewrote the data files instead (copy-on-write).
func checkNoDeleteFiles(t *testing.T, sink *icebergio.Sink) {
	t.Helper()
	ctx := context.Background()
	cat, err := sink.Catalog.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer icebergio.CloseCatalog(cat)
	tbl, err := icebergio.LoadTable(ctx, cat, sink.Table.Ident)
	if err != nil {
		t.Fatal(err)
	}
	sum := tbl.CurrentSnapshot().Summary.Properties
	if sum["total-delete-files"] != "0" || sum["total-data-files"] == "0" {
		t.Errorf("the current snapshot's summary %v: want data files and no delete file", sum)
	}
}

// Open refuses an upsert table whose deletes are merge-on-read.
func TestUpsertRefusesMergeOnRead(t *testing.T) {
	cfg, _ := icebergtest.Catalog(t)
	_, err := icebergio.Open(context.Background(), cfg, tables.Table{Ident: "ns.mor", Row: Row{},
		Properties: map[string]string{"write.delete.mode": "merge-on-read"}}, pipeline, icebergio.Upsert("key", "partition", "offset"))
	if err == nil || !strings.Contains(err.Error(), "write.delete.mode is merge-on-read") {
		t.Fatalf("Open of a merge-on-read upsert table = %v, want a refusal naming write.delete.mode", err)
	}
}
