package icebergio

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/iceberg-go/codec"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

type flushRow struct {
	Offset int64 `iceberg:"offset,required"`
	Window int64 `iceberg:"window,required"`
}

type flushBatch struct {
	r    offsets.Range
	rows []flushRow
}

func (b flushBatch) Range() offsets.Range  { return b.r }
func (b flushBatch) RowSlice() any         { return b.rows }
func (b flushBatch) RowOffset(i int) int64 { return b.rows[i].Offset }

// flushWriter makes table ident of flushRow in a fresh SQLite catalog and
// file warehouse, and returns a set-up writer for it, torn down with t.
func flushWriter(ctx context.Context, t *testing.T, ident string) *writeFn {
	t.Helper()
	return fileWriter(ctx, t, tables.Table{Ident: ident, Row: flushRow{}})
}

// fileWriter makes tbl in a fresh SQLite catalog and file warehouse, and
// returns a set-up writer for it, torn down with tb.
func fileWriter(ctx context.Context, tb testing.TB, tbl tables.Table) *writeFn {
	tb.Helper()
	dir := tb.TempDir()
	cc := CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	cat, err := cc.Open(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer CloseCatalog(cat)
	if _, err := EnsureTable(ctx, cat, tbl); err != nil {
		tb.Fatal(err)
	}
	f := &writeFn{Catalog: cc, Ident: tbl.Ident, Pipeline: "p"}
	if err := f.Setup(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Teardown)
	return f
}

// TestWriterFlushesLargeBundles writes more than twice flushRows rows into
// each of two windows in one bundle: the writer writes them in the
// background as it goes, and FinishBundle still emits one FileSet per
// window whose files hold every row of that window exactly once.
func TestWriterFlushesLargeBundles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := flushWriter(ctx, t, "ns.flush")

	const batch = 4096
	perWindow := int64(2*flushRows + 3*batch + 17)
	wins := []window.IntervalWindow{
		{Start: mtime.FromMilliseconds(0), End: mtime.FromMilliseconds(1000)},
		{Start: mtime.FromMilliseconds(1000), End: mtime.FromMilliseconds(2000)},
	}
	var sets []FileSet
	emit := func(_ beam.EventTime, fs FileSet) { sets = append(sets, fs) }
	f.StartBundle(ctx, emit)
	next := []int64{0, 0}
	for next[0] < perWindow || next[1] < perWindow {
		for wi, w := range wins {
			n := min(int64(batch), perWindow-next[wi])
			if n == 0 {
				continue
			}
			b := flushBatch{r: offsets.Range{Topic: "t", Partition: int32(wi), Start: next[wi], End: next[wi] + n}}
			for o := next[wi]; o < next[wi]+n; o++ {
				b.rows = append(b.rows, flushRow{Offset: o, Window: int64(wi)})
			}
			if err := f.ProcessElement(ctx, w, w.Start, b, emit); err != nil {
				t.Fatal(err)
			}
			next[wi] += n
		}
	}
	if err := f.FinishBundle(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if f.inflight != nil {
		t.Errorf("a background write is left after FinishBundle")
	}
	if len(sets) != 2 {
		t.Fatalf("got %d FileSets, want one per window", len(sets))
	}
	for _, fs := range sets {
		if fs.Rows != perWindow {
			t.Errorf("window %d: FileSet.Rows = %d, want %d", fs.WindowEnd, fs.Rows, perWindow)
		}
		if len(fs.Ranges) != 1 || fs.Ranges[0].Start != 0 || fs.Ranges[0].End != perWindow {
			t.Errorf("window %d: ranges %v, want one range [0,%d)", fs.WindowEnd, fs.Ranges, perWindow)
		}
		if len(fs.Files) < 3 {
			t.Errorf("window %d: %d files, want at least 3 (two background writes and the rest)", fs.WindowEnd, len(fs.Files))
		}
		var rows int64
		for _, enc := range fs.Files {
			df, err := codec.DecodeDataFile(enc, f.tbl.Spec(), f.tbl.Schema(), f.tbl.Metadata().Version())
			if err != nil {
				t.Fatal(err)
			}
			rows += df.Count()
		}
		if rows != perWindow {
			t.Errorf("window %d: files hold %d rows, want %d", fs.WindowEnd, rows, perWindow)
		}
	}
}

// TestWriterBackgroundWriteError checks that a failed background write
// fails FinishBundle, and that none is left running.
func TestWriterBackgroundWriteError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := flushWriter(ctx, t, "ns.flusherr")
	w := window.IntervalWindow{Start: mtime.FromMilliseconds(0), End: mtime.FromMilliseconds(1000)}
	emit := func(beam.EventTime, FileSet) { t.Error("emitted after a failed write") }
	f.StartBundle(ctx, emit)
	rows := make([]flushRow, flushRows)
	for i := range rows {
		rows[i].Offset = int64(i)
	}
	if err := f.ProcessElement(ctx, w, w.Start, flushBatch{r: offsets.Range{Topic: "t", End: flushRows}, rows: rows}, emit); err != nil {
		t.Fatal(err)
	}
	// The background write has started (once the queued append ran); make
	// it fail as if it had.
	f.queue.sync()
	buf := f.bufs[w.MaxTimestamp()]
	if len(buf.flush.writes) != 1 {
		t.Fatalf("%d background writes after %d rows, want 1", len(buf.flush.writes), flushRows)
	}
	<-buf.flush.writes[0].done
	buf.flush.writes[0].err = errors.New("storage away")
	if err := f.FinishBundle(ctx, emit); err == nil || err.Error() != "storage away" {
		t.Fatalf("FinishBundle: %v, want the write's error", err)
	}
	if f.inflight != nil {
		t.Errorf("a background write is left after FinishBundle")
	}
}

// TestWriterBoundsBackgroundWrites feeds one window five buffers' worth of
// rows: the writer never runs more than maxWrites background writes at
// once, it does run more than one when there are cores for them, and the
// bundle's files still hold every row once.
func TestWriterBoundsBackgroundWrites(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if maxWrites() != 2 {
		t.Fatalf("maxWrites() = %d with GOMAXPROCS 2, want 2", maxWrites())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := flushWriter(ctx, t, "ns.flushbound")
	w := window.IntervalWindow{Start: mtime.FromMilliseconds(0), End: mtime.FromMilliseconds(1000)}
	var sets []FileSet
	emit := func(_ beam.EventTime, fs FileSet) { sets = append(sets, fs) }
	f.StartBundle(ctx, emit)
	const total = 5 * flushRows
	most := 0
	for next := int64(0); next < total; next += flushRows {
		rows := make([]flushRow, flushRows)
		for i := range rows {
			rows[i].Offset = next + int64(i)
		}
		if err := f.ProcessElement(ctx, w, w.Start, flushBatch{r: offsets.Range{Topic: "t", Start: next, End: next + flushRows}, rows: rows}, emit); err != nil {
			t.Fatal(err)
		}
		f.queue.sync() // the append, and so the write it starts, has run
		most = max(most, len(f.inflight))
		if len(f.inflight) > maxWrites() {
			t.Fatalf("%d background writes not waited for, want at most %d", len(f.inflight), maxWrites())
		}
	}
	if most < 2 {
		t.Errorf("at most %d background write at a time, want up to %d", most, maxWrites())
	}
	if err := f.FinishBundle(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if f.inflight != nil {
		t.Errorf("background writes are left after FinishBundle")
	}
	if len(sets) != 1 || sets[0].Rows != total {
		t.Fatalf("FileSets %+v, want one of %d rows", sets, total)
	}
	var n int64
	for _, enc := range sets[0].Files {
		df, err := codec.DecodeDataFile(enc, f.tbl.Spec(), f.tbl.Schema(), f.tbl.Metadata().Version())
		if err != nil {
			t.Fatal(err)
		}
		n += df.Count()
	}
	if n != total {
		t.Errorf("files hold %d rows, want %d", n, total)
	}
}
