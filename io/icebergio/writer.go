package icebergio

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"reflect"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/offsets"
)

func init() {
	// FinishBundle emits, which the register wrappers cannot express: reflection.
	beam.RegisterType(reflect.TypeOf((*writeFn)(nil)).Elem())
	register.Emitter2[beam.EventTime, FileSet]()
	beam.RegisterType(reflect.TypeOf((*FileSet)(nil)).Elem())
}

// FileSet is the data files of one table and one window: encoded data
// files (about 400 bytes each), never rows, with the source ranges their
// rows came from. A writer emits one per window of a bundle; mergeFn
// gathers a window's sets from every writer into one, the unit of one
// commit.
type FileSet struct {
	Table     string
	WindowEnd int64 // milliseconds since the epoch
	Files     [][]byte
	Ranges    []offsets.Range
	Rows      int64
	Bytes     int64
	// MinSourceMs and MaxSourceMs bound the source timestamps of the rows'
	// records (0 when unknown).
	MinSourceMs, MaxSourceMs int64
	// Keys lists, for a table written with Upsert, the key of every row in
	// Files and every delete of a key (see KeyedBatch), with its source
	// position: what the committer needs to keep one live row per key.
	// Empty otherwise.
	Keys []KeyRef
}

// KeyRef is one row's key, or one delete of a key, at its source position.
type KeyRef struct {
	Key       string
	Partition int32
	Offset    int64
	// Delete is set for a delete of the key (a tombstone): no row.
	Delete bool
}

func (fs FileSet) end() time.Time { return time.UnixMilli(fs.WindowEnd).UTC() }

// add merges o, another set of the same table and window, into fs.
func (fs *FileSet) add(o FileSet) {
	fs.Files = append(fs.Files, o.Files...)
	for _, r := range o.Ranges {
		fs.Ranges = offsets.AppendRange(fs.Ranges, r)
	}
	fs.Rows += o.Rows
	fs.Bytes += o.Bytes
	fs.Keys = append(fs.Keys, o.Keys...)
	if o.MinSourceMs > 0 && (fs.MinSourceMs == 0 || o.MinSourceMs < fs.MinSourceMs) {
		fs.MinSourceMs = o.MinSourceMs
	}
	fs.MaxSourceMs = max(fs.MaxSourceMs, o.MaxSourceMs)
}

// writeFn writes the rows of each window of a bundle into Parquet data files
// and closes them in FinishBundle: rows buffered in a DoFn are in no runner
// checkpoint, so a bundle's output is closed files plus their metadata.
type writeFn struct {
	Catalog  CatalogConfig
	Ident    string
	Pipeline string
	// TargetFileSize overrides the table's target file size when > 0.
	TargetFileSize int64
	// TopicIDs are the current ids of the source topics.
	TopicIDs TopicIDs
	// SchemaEvery is how often, in nanoseconds, a bundle's start looks for
	// a new schema or promoted columns of the table (see evolve.go).
	// Default (0) 2s; negative never.
	SchemaEvery int64
	// Upsert is set for a table written with Upsert: the writer lists the
	// keys of its rows and the deletes in each FileSet.
	Upsert bool

	cat       catalog.Catalog
	tbl       *table.Table
	schema    *arrow.Schema
	prom      []rows.PromotedCol
	checked   time.Time
	committed offsets.Offsets
	bufs      map[mtime.Time]*windowBuf
	inflight  []*fileWrite // the background writes not yet waited for (see flush.go)
	queue     *appendQueue // this bundle's appends (see appendq.go)
}

// windowBuf holds one window's rows of the current bundle, as Arrow columns.
type windowBuf struct {
	end     mtime.Time
	builder *array.RecordBuilder
	app     *rows.Appender
	rowType reflect.Type
	rows    int64
	ranges  []offsets.Range
	minMs   int64
	maxMs   int64
	flush   bufWrites
	keys    []KeyRef // with Upsert
}

func (f *writeFn) Setup(ctx context.Context) error {
	return Retry(ctx, defaultBackoff, "open table", f.Ident, func() error {
		cat, err := f.Catalog.OpenExisting(ctx)
		if err != nil {
			return err
		}
		tbl, err := LoadTable(ctx, cat, f.Ident)
		if err != nil {
			CloseCatalog(cat)
			return err
		}
		sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
		if err != nil {
			CloseCatalog(cat)
			return Permanent(err)
		}
		// The table is the checkpoint: rows at or below the offsets it
		// already holds are dropped, whatever the runner replays.
		committed, _, _, err := committedOffsets(tbl, f.Pipeline, f.TopicIDs)
		if err != nil {
			CloseCatalog(cat)
			return Permanent(err)
		}
		prom, err := rows.PromotedColumns(tbl)
		if err != nil {
			CloseCatalog(cat)
			return Permanent(err)
		}
		f.cat, f.tbl, f.schema, f.committed, f.prom, f.checked = cat, tbl, sc, committed, prom, time.Now()
		return nil
	})
}

func (f *writeFn) StartBundle(ctx context.Context, _ func(beam.EventTime, FileSet)) {
	if f.queue != nil {
		f.queue.wait() // left by a bundle that failed: its rows are dropped with it
	}
	f.bufs = map[mtime.Time]*windowBuf{}
	f.refreshSchema(ctx)
	f.queue = newAppendQueue()
}

// refreshSchema takes up the table's current schema and promoted columns,
// at most every SchemaEvery, between bundles (no write of an earlier bundle
// runs then, and every file of a bundle has one schema). A catalog that
// cannot be reached keeps the schema known: rows written with it lose
// nothing (a member not yet promoted stays in the overflow column).
func (f *writeFn) refreshSchema(ctx context.Context) {
	every := time.Duration(f.SchemaEvery)
	if every == 0 {
		every = 2 * time.Second
	}
	if every < 0 || time.Since(f.checked) < every {
		return
	}
	f.checked = time.Now()
	tbl, err := LoadTable(ctx, f.cat, f.Ident)
	if err != nil {
		slog.Warn("schema check failed; writing with the known schema", "table", f.Ident, "err", err)
		return
	}
	prom, err := rows.PromotedColumns(tbl)
	if err != nil {
		slog.Warn("schema check failed; writing with the known schema", "table", f.Ident, "err", err)
		return
	}
	if tbl.Schema().ID == f.tbl.Schema().ID && tbl.Metadata().DefaultPartitionSpec() == f.tbl.Metadata().DefaultPartitionSpec() && rows.SamePromoted(prom, f.prom) {
		return
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		slog.Warn("schema check failed; writing with the known schema", "table", f.Ident, "err", err)
		return
	}
	slog.Info("table schema changed: writing with the new one", "table", f.Ident, "schema_id", tbl.Schema().ID,
		"was", f.tbl.Schema().ID, "promoted", len(prom))
	f.tbl, f.schema, f.prom = tbl, sc, prom
}

func (f *writeFn) ProcessElement(ctx context.Context, w beam.Window, _ beam.EventTime, elem beam.X, _ func(beam.EventTime, FileSet)) error {
	b, ok := elem.(Batch)
	if !ok {
		return fmt.Errorf("icebergio.Write %s: element %T does not implement icebergio.Batch", f.Ident, elem)
	}
	r := b.Range()
	slice := reflect.ValueOf(b.RowSlice())
	n := slice.Len()
	lo := 0
	if next, ok := f.committed.Next(r.Topic, r.Partition); ok {
		if r.End <= next {
			return nil // wholly in the table already
		}
		if r.Start < next {
			lo = firstRowAtOrAfter(b, n, next)
			r.Start = next
		}
	}
	buf := f.bufs[w.MaxTimestamp()]
	if buf == nil {
		buf = &windowBuf{end: w.MaxTimestamp()}
		f.bufs[buf.end] = buf
	}
	if n > lo {
		if buf.builder == nil {
			buf.builder = array.NewRecordBuilder(memory.DefaultAllocator, f.schema)
			rt, err := rows.TypeOf(slice.Type().Elem())
			if err != nil {
				return err
			}
			// The schema may have changed since Open checked it: never
			// write a column the rows have as null.
			if err := rt.CheckCompatible(f.tbl.Schema()); err != nil {
				return fmt.Errorf("icebergio.Write %s: %w", f.Ident, err)
			}
			buf.app = rows.NewPromotingAppender(rt, buf.builder, f.prom)
			ident := f.Ident
			buf.app.Mismatch = func(col string) { promotionMismatches.WithLabelValues(ident, col).Inc() }
			buf.rowType = slice.Type().Elem()
		} else if buf.rowType != slice.Type().Elem() {
			return fmt.Errorf("icebergio.Write %s: rows of %v and %v in one PCollection", f.Ident, buf.rowType, slice.Type().Elem())
		}
		buf.rows += int64(n - lo)
		app := buf.app
		if err := f.queue.add(func() {
			f.toAppend(ctx, buf, n-lo)
			app.AppendSlice(slice, lo, n)
			f.appended(ctx, buf, n-lo)
		}); err != nil {
			return fmt.Errorf("icebergio.Write %s: %w", f.Ident, err)
		}
	}
	buf.ranges = offsets.AppendRange(buf.ranges, r)
	if f.Upsert {
		kb := elem.(KeyedBatch) // Write checked the type
		for i := lo; i < n; i++ {
			buf.keys = append(buf.keys, KeyRef{Key: kb.Key(i), Partition: r.Partition, Offset: b.RowOffset(i)})
		}
		for _, d := range kb.Deletes() {
			if d.Offset >= r.Start {
				buf.keys = append(buf.keys, KeyRef{Key: d.Key, Partition: r.Partition, Offset: d.Offset, Delete: true})
			}
		}
	}
	if st, ok := elem.(SourceTimed); ok && n > lo {
		mn, mx := st.SourceTimeRange()
		if mn > 0 && (buf.minMs == 0 || mn < buf.minMs) {
			buf.minMs = mn
		}
		buf.maxMs = max(buf.maxMs, mx)
	}
	return nil
}

func (f *writeFn) FinishBundle(ctx context.Context, emit func(beam.EventTime, FileSet)) error {
	defer f.waitWrites() // none is left running, even on an error
	err := f.queue.wait()
	f.queue = nil
	if err != nil {
		return fmt.Errorf("icebergio.Write %s: %w", f.Ident, err)
	}
	for _, buf := range f.bufs {
		// Files and Ranges are empty, never nil: Go's row coder sends a nil slice as a
		// null field, and Beam Java's RowCoder, when a portable runner decodes and
		// re-encodes the element (Flink does between chained operators), writes a null
		// non-nullable field as absent without marking it null; the next decode then
		// misreads the element (on Flink: OutOfMemoryError in IterableLikeCoder.decode).
		fs := FileSet{Table: f.Ident, WindowEnd: int64(buf.end) + 1, Files: [][]byte{},
			Ranges: append([]offsets.Range{}, buf.ranges...), Rows: buf.rows, MinSourceMs: buf.minMs, MaxSourceMs: buf.maxMs,
			Keys: append([]KeyRef{}, buf.keys...)}
		if buf.rows > 0 {
			files, err := f.finishWrites(ctx, buf)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				// Never emit these rows' ranges without their files: the
				// committer would advance past rows no file holds.
				return fmt.Errorf("%w: icebergio.Write %s: %d rows made no data file", ErrLostRows, f.Ident, buf.rows)
			}
			rowsWritten.WithLabelValues(f.Ident).Add(float64(buf.rows))
			filesWritten.WithLabelValues(f.Ident).Add(float64(len(files)))
			for _, df := range files {
				enc, err := codec.EncodeDataFile(df, f.tbl.Spec(), f.tbl.Schema(), f.tbl.Metadata().Version())
				if err != nil {
					return fmt.Errorf("icebergio.Write %s: encode data file: %w", f.Ident, err)
				}
				fs.Files = append(fs.Files, enc)
				fs.Bytes += df.FileSizeBytes()
				fileSize.WithLabelValues(f.Ident).Observe(float64(df.FileSizeBytes()))
			}
		}
		emit(beam.EventTime(buf.end), fs)
	}
	f.bufs = nil
	return nil
}

// writeFiles writes rec as Parquet data files, retrying while storage is
// away. Files of a failed try are orphans: never committed, removed by
// table maintenance.
func (f *writeFn) writeFiles(ctx context.Context, rec arrow.RecordBatch) ([]iceberg.DataFile, error) {
	var opts []table.WriteRecordOption
	if f.TargetFileSize > 0 {
		opts = append(opts, table.WithTargetFileSize(f.TargetFileSize))
	}
	var out []iceberg.DataFile
	err := Retry(ctx, defaultBackoff, "write data files", f.Ident, func() error {
		out = out[:0]
		rec.Retain() // WriteRecords releases what it consumes
		seq := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
		for df, err := range table.WriteRecords(ctx, f.tbl, f.schema, iter.Seq2[arrow.RecordBatch, error](seq), opts...) {
			if err != nil {
				return err
			}
			out = append(out, df)
		}
		return nil
	})
	return out, err
}

func (f *writeFn) Teardown() {
	if f.queue != nil {
		f.queue.wait()
		f.queue = nil
	}
	if f.cat != nil {
		CloseCatalog(f.cat)
	}
}

// LoadTable loads table ident of cat. A malformed identifier is a permanent
// error for Retry; a failed load wraps ErrCatalog.
func LoadTable(ctx context.Context, cat catalog.Catalog, ident string) (*table.Table, error) {
	id, err := Identifier(ident)
	if err != nil {
		return nil, Permanent(err)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%w: load table %s: %v", ErrCatalog, ident, err)
	}
	return tbl, nil
}
