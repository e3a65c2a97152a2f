package icebergio

import (
	"context"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// flushRows is how many rows of one window a writer buffers within a
// bundle before it writes them as data files, in the background, while the
// bundle goes on.
//
// On Prism a bundle of the read stage holds up to a second of every
// partition (all pending restrictions go in one bundle), so with a backlog
// a writer that kept a whole bundle in Arrow would hold millions of rows.
// Writing every flushRows rows bounds the writer's memory whatever the
// bundle's size, and lets Parquet encoding run on another core beside the
// read and parse. Files are still emitted only in FinishBundle, so what a
// bundle hands the committer, and when, is unchanged; a bundle that fails
// leaves orphan files, as before.
const flushRows = 256 << 10

// fileWrite is one write of buffered rows as data files, running in the
// background; files and err are set when done is closed.
type fileWrite struct {
	done  chan struct{}
	files []iceberg.DataFile
	err   error
}

// bufWrites is what a window's buffer has handed to background writes.
type bufWrites struct {
	unwritten int64 // rows in the builder, not yet handed to a write
	writes    []*fileWrite
	last      sizeHint // the size of the last write
}

// sizeHint is what one write held: its rows, and the value bytes of each
// string or binary column (0 for the others), by field index.
type sizeHint struct {
	rows int64
	data []int64
}

// hintOf is rec's size as a sizeHint.
func hintOf(rec arrow.RecordBatch) sizeHint {
	h := sizeHint{rows: rec.NumRows(), data: make([]int64, rec.NumCols())}
	for i, col := range rec.Columns() {
		if vb, ok := col.(interface{ ValueBytes() []byte }); ok {
			h.data[i] = int64(len(vb.ValueBytes()))
		}
	}
	return h
}

// toAppend runs on the append goroutine before n rows go into buf. A buffer
// that holds rows and would pass flushRows with these is written first, so
// that a write holds at most flushRows rows (unless one batch is larger):
// an Arrow builder's capacity doubles, and one that passed 2^18 rows by a
// batch held 2^19. A buffer that has been written in this bundle, and is
// empty again, reserves room for as much as its last write: a column is
// then allocated once per write instead of doubling its way up from zero,
// copying and clearing each step (a fifth of the bytes a backlog
// allocated). A window that gets few rows in a bundle is never written
// before FinishBundle, and reserves nothing.
func (f *writeFn) toAppend(ctx context.Context, buf *windowBuf, n int) {
	if buf.flush.unwritten > 0 && buf.flush.unwritten+int64(n) > flushRows {
		f.startWrite(ctx, buf)
	}
	if buf.flush.unwritten == 0 && buf.flush.last.rows > 0 {
		reserve(buf.builder, buf.flush.last, n)
	}
}

// reserve sizes an empty builder for the rows of h (at least n), and its
// string and binary columns for h's value bytes scaled to those rows, with
// an eighth more as slack.
func reserve(b *array.RecordBuilder, h sizeHint, n int) {
	rows := max(h.rows, int64(n))
	b.Reserve(int(rows))
	if h.rows == 0 || len(h.data) != len(b.Fields()) {
		return // no hint yet, or one of another schema
	}
	for i, fb := range b.Fields() {
		db, ok := fb.(interface{ ReserveData(int) })
		if !ok || h.data[i] == 0 {
			continue
		}
		d := h.data[i] * rows / h.rows
		db.ReserveData(int(d + d/8))
	}
}

// appended counts n rows just appended to buf, and writes the buffered rows
// once there are flushRows of them.
func (f *writeFn) appended(ctx context.Context, buf *windowBuf, n int) {
	buf.flush.unwritten += int64(n)
	if buf.flush.unwritten >= flushRows {
		f.startWrite(ctx, buf)
	}
}

// maxWrites is how many background writes one writer runs at a time: one
// per core, up to four. Parquet encoding is the largest share of a
// backlog's CPU (about a quarter), and with a single write the appends
// waited for it: a bundle then kept fewer cores busy than the machine has.
// Each write holds up to flushRows rows, so a writer holds at most
// maxWrites+1 buffers.
func maxWrites() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// startWrite hands the window's buffered rows to a background write. At
// most maxWrites writes of this writer run at a time: it waits for the
// oldest first.
func (f *writeFn) startWrite(ctx context.Context, buf *windowBuf) {
	for len(f.inflight) >= maxWrites() {
		<-f.inflight[0].done
		f.inflight = f.inflight[1:]
	}
	rec := buf.builder.NewRecordBatch() // also empties the builder for reuse
	buf.flush.unwritten = 0
	buf.flush.last = hintOf(rec)
	w := &fileWrite{done: make(chan struct{})}
	buf.flush.writes = append(buf.flush.writes, w)
	f.inflight = append(f.inflight, w)
	go func() {
		defer close(w.done)
		w.files, w.err = f.writeFiles(ctx, rec)
		rec.Release()
	}()
}

// finishWrites writes the window's remaining rows, waits for all of its
// writes, releases its builder, and returns its data files. On an error no
// write of this writer is left running.
func (f *writeFn) finishWrites(ctx context.Context, buf *windowBuf) ([]iceberg.DataFile, error) {
	if buf.flush.unwritten > 0 {
		f.startWrite(ctx, buf)
	}
	var files []iceberg.DataFile
	var err error
	for _, w := range buf.flush.writes {
		<-w.done
		if err == nil {
			err = w.err
		}
		files = append(files, w.files...)
	}
	buf.builder.Release()
	if err != nil {
		return nil, err
	}
	return files, nil
}

// waitWrites waits for the writer's background writes, if any run.
func (f *writeFn) waitWrites() {
	for _, w := range f.inflight {
		<-w.done
	}
	f.inflight = nil
}
