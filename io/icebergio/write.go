package icebergio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.Function1x2[FileSet, string, FileSet](keyByTable)
	register.DoFn4x0[beam.Window, string, func(*FileSet) bool, func(string, FileSet)](&mergeFn{})
	register.Emitter2[string, FileSet]()
	register.Iter1[FileSet]()
	register.DoFn5x1[context.Context, state.Provider, string, FileSet, func(Commit), error](&commitFn{})
	register.Emitter1[Commit]()
	beam.RegisterType(reflect.TypeOf((*Commit)(nil)).Elem())
}

// Sink is a table prepared for writing: created if it was missing, its
// schema checked against the row type, its committed offsets read.
type Sink struct {
	Catalog  CatalogConfig
	Table    tables.Table
	Pipeline string
	// Interval is the window length: one snapshot per interval. Default 10s.
	Interval time.Duration
	// TargetFileSize overrides the table's target data file size when > 0.
	TargetFileSize int64
	// Committed holds the offsets the table held when Open ran.
	Committed offsets.Offsets
	// TopicIDs are the current Kafka ids of the source topics (see Topics).
	TopicIDs TopicIDs
	// Recreated lists the topics whose offsets in the table were recorded
	// under another topic id: the topic was deleted and created again, and
	// those offsets, which Committed leaves out, belong to the old one.
	Recreated []string
	// Others lists the other pipeline ids that hold offsets of the same
	// topics in the table (see Topics): each would store every record once
	// more.
	Others []string
	// ProgressEvery is how often the committer records, in the table's
	// progress property, the offsets that windows without rows advanced.
	// Default (0) once a minute; see Bounded. While the process stops
	// cleanly (runners.Stop), where the committer runs in it (Prism), they
	// are recorded at once.
	ProgressEvery time.Duration
	// UpsertKey, UpsertPartition and UpsertOffset, set by Upsert, name the
	// key column and the source partition and offset columns of a table
	// that holds one live row per key.
	UpsertKey, UpsertPartition, UpsertOffset string
}

// Option configures a Sink at Open.
type Option func(*Sink)

// Topics gives the current Kafka topic ids of the sources. Every commit
// records them; offsets that the table recorded for a topic under another
// id are left out of Committed and listed in Recreated. Default: none
// known, and no offsets are ever left out.
func Topics(ids TopicIDs) Option { return func(s *Sink) { s.TopicIDs = ids } }

// Every sets the commit interval: the window length, one snapshot per
// window that has rows. Default 10s.
func Every(d time.Duration) Option { return func(s *Sink) { s.Interval = d } }

// Bounded is for an input that ends: the committer records the offsets of
// every window without rows at once, so that when the run ends the table
// holds every offset that was read (see Uncommitted).
func Bounded() Option { return func(s *Sink) { s.ProgressEvery = time.Nanosecond } }

// Upsert makes the table hold at most one live row per key: the latest, by
// source offset. The batches Write takes must be KeyedBatch; key names the
// column that holds KeyedBatch.Key, partition the int32 column that holds
// each row's source partition (its batch's Range.Partition), and offset
// the column that holds its source offset (Batch.RowOffset). Each window's commit is one
// transaction of up to three snapshots: a delete of the rows of every key
// the window holds, the append of the window's files, and, when a key is in
// the window more than once, a delete of all but its latest row. A reader
// of the table's current snapshot sees all of it or none; a reader of one
// of those snapshots by id sees the step. A key must live in one source
// partition (Kafka's default partitioner puts it there): the latest row is
// the one of the highest offset.
//
// The deletes are copy-on-write: the data files that hold a replaced row are
// rewritten without it, and the table holds no delete file. Open refuses a
// table whose write.delete.mode is merge-on-read: iceberg-go v0.7.0 writes
// its position deletes in the order it scanned the data files, not sorted
// by file and position as the spec says, and Trino then misses some of them
// (rows of replaced keys came back in Trino and not in Spark or pyiceberg;
// see docs/DESIGN.md, "Upserts"). The table must be of format version 2 or
// later.
func Upsert(key, partition, offset string) Option {
	return func(s *Sink) { s.UpsertKey, s.UpsertPartition, s.UpsertOffset = key, partition, offset }
}

// Open prepares table t of catalog cat for pipeline, the stable pipeline id
// written into every snapshot summary. It fails when the catalog cannot be
// reached or the table's schema cannot take the rows.
func Open(ctx context.Context, cat CatalogConfig, t tables.Table, pipeline string, opts ...Option) (*Sink, error) {
	if pipeline == "" {
		return nil, fmt.Errorf("icebergio.Open %s: empty pipeline id", t.Ident)
	}
	c, err := cat.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer CloseCatalog(c)
	tbl, err := EnsureTable(ctx, c, t)
	if err != nil {
		return nil, err
	}
	sink := &Sink{Catalog: cat, Table: t, Pipeline: pipeline, Interval: 10 * time.Second}
	for _, o := range opts {
		o(sink)
	}
	sink.Committed, _, sink.Recreated, err = committedOffsets(tbl, pipeline, sink.TopicIDs)
	if err != nil {
		return nil, err
	}
	if sink.UpsertKey != "" {
		if v := tbl.Metadata().Version(); v < 2 {
			return nil, fmt.Errorf("icebergio.Open %s: an upsert table needs format version 2 or later (position deletes), it is %d", t.Ident, v)
		}
		for _, col := range []string{sink.UpsertKey, sink.UpsertPartition, sink.UpsertOffset} {
			if _, ok := tbl.Schema().FindFieldByName(col); !ok {
				return nil, fmt.Errorf("icebergio.Open %s: upsert column %q is not in the table", t.Ident, col)
			}
		}
		if mode := tbl.Properties()[table.WriteDeleteModeKey]; mode == table.WriteModeMergeOnRead {
			return nil, fmt.Errorf("icebergio.Open %s: an upsert table's deletes are copy-on-write; its %s is %s, whose position deletes iceberg-go writes unsorted and Trino then misreads: set it to %s (ALTER TABLE ... SET TBLPROPERTIES)",
				t.Ident, table.WriteDeleteModeKey, mode, table.WriteModeCopyOnWrite)
		}
	}
	for _, other := range Pipelines(tbl) {
		if other == pipeline {
			continue
		}
		o, err := CommittedOffsets(tbl, other)
		if err != nil {
			return nil, err
		}
		for topic := range sink.TopicIDs {
			if len(o[topic]) > 0 {
				sink.Others = append(sink.Others, other)
				break
			}
		}
	}
	return sink, nil
}

// Write writes batches, a PCollection<B> where B implements Batch, into the
// sink's table, exactly once, and returns PCollection<Commit>, one element
// per window. start gives the offset where the read began for each
// partition (the committer needs it to keep windows in order).
//
// Rows are never shuffled: writers turn each bundle's rows into Parquet
// data files inside the fused stage, and only file metadata reaches the
// single committer of the table, which commits windows in order.
func Write(s beam.Scope, sink *Sink, start offsets.Offsets, batches beam.PCollection) beam.PCollection {
	s = s.Scope("icebergio.Write")
	sink.Catalog.exportPassword() // the DoFns carry none
	if !batches.Type().Type().Implements(batchType) {
		panic(fmt.Sprintf("icebergio.Write %s: %v does not implement icebergio.Batch", sink.Table.Ident, batches.Type().Type()))
	}
	upsert := sink.UpsertKey != ""
	if upsert && !batches.Type().Type().Implements(keyedBatchType) {
		panic(fmt.Sprintf("icebergio.Write %s: an upsert table takes an icebergio.KeyedBatch, not %v", sink.Table.Ident, batches.Type().Type()))
	}
	interval := sink.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	windowed := beam.WindowInto(s, window.NewFixedWindows(interval), batches)
	files := beam.ParDo(s, &writeFn{Catalog: sink.Catalog, Ident: sink.Table.Ident, Pipeline: sink.Pipeline, TargetFileSize: sink.TargetFileSize, TopicIDs: sink.TopicIDs,
		Upsert: upsert}, windowed)
	// A writer emits a bundle's files when the bundle ends, stamped at the
	// end of their window. A runner may have moved the watermark past that
	// window meanwhile (Prism v2.77 takes a stage's output watermark from
	// the last SDF residual's estimate, over bundles still running), and a
	// GroupByKey drops late elements without a word: their rows would be
	// lost from the window, every later window would wait for them, and a
	// bounded run would end with them uncommitted. So late files are kept
	// and fire as a late pane of their window, which the committer orders by
	// offsets like any other.
	files = beam.WindowInto(s, window.NewFixedWindows(interval), files,
		beam.AllowedLateness(LateFiles), beam.PanesDiscard())
	grouped := beam.GroupByKey(s, beam.ParDo(s, keyByTable, files))
	perWindow := beam.ParDo(s, &mergeFn{}, grouped)
	global := beam.WindowInto(s, window.NewGlobalWindows(), perWindow)
	return beam.ParDo(s, &commitFn{
		Catalog: sink.Catalog, Ident: sink.Table.Ident, Pipeline: sink.Pipeline, Start: start, TopicIDs: sink.TopicIDs,
		ProgressEvery: int64(sink.ProgressEvery), Run: newRunID(), UpsertKey: sink.UpsertKey, UpsertPartition: sink.UpsertPartition, UpsertOffset: sink.UpsertOffset,
		Pending: state.MakeBagState[FileSet]("pending"),
		Running: state.MakeValueState[string]("running"),
	}, global)
}

// LateFiles is how long after the end of its window a writer's files are
// still taken (see Write). Files later than that are dropped by the runner;
// the committer then waits for them, and a bounded run fails (bronze checks
// that the tables hold every offset it read).
const LateFiles = time.Hour

func keyByTable(f FileSet) (string, FileSet) { return f.Table, f }

// mergeFn gathers every writer's files of one window into one FileSet.
type mergeFn struct{}

func (mergeFn) ProcessElement(w beam.Window, table string, sets func(*FileSet) bool, emit func(string, FileSet)) {
	// Empty slices, never nil: see FinishBundle in writer.go.
	out := FileSet{Table: table, WindowEnd: int64(w.MaxTimestamp()) + 1, Files: [][]byte{}, Ranges: []offsets.Range{}, Keys: []KeyRef{}}
	var fs FileSet
	for sets(&fs) {
		out.add(fs)
	}
	emit(table, out)
}

// commitFn is the single committer of a table. Windows can reach it in any
// order; it keeps those that wait for an earlier window in state, with the
// offsets that windows without rows advanced, so that both are part of the
// runner's checkpoints.
type commitFn struct {
	Catalog  CatalogConfig
	Ident    string
	Pipeline string
	Start    offsets.Offsets // the offsets the tables held at construction
	TopicIDs TopicIDs
	// ProgressEvery is Sink.ProgressEvery, in nanoseconds.
	ProgressEvery int64
	// UpsertKey, UpsertPartition and UpsertOffset are the Sink's.
	UpsertKey, UpsertPartition, UpsertOffset string

	Pending state.Bag[FileSet]
	Running state.Value[string]

	// Run identifies this pipeline's committer among the runs of one
	// process (tests run several), for the mirror.
	Run string

	c *committer
}

// mirror holds, per committer run and key, what the last call left in
// state: the windows still waiting and the running offsets; and it
// serializes the calls of one key. On Prism v2.77, once a bounded read's
// watermark had jumped to the end of time, two bundles of the committer's
// one key ran at the same time (logs: a window's call waited while an
// earlier window's commit was under way), each with the state as it was
// before the other; the one that ended last wrote its view, and a window
// left waiting vanished, so every later window waited for it
// (TestHappyPath, under load). Calls of one key now take its lock, and
// merge the state with what the previous call left here. The mirror is
// process-wide because bundles of one key may run on different instances
// of the DoFn. The state alone is what a runner checkpoints and restores
// (Flink, where one key's calls run one at a time); the table's offsets
// remain the truth either way.
var mirror = struct {
	sync.Mutex
	m map[string]*memState
}{m: map[string]*memState{}}

type memState struct {
	sync.Mutex
	pending []FileSet
	running offsets.Offsets
}

// mirrored returns the mirror entry of key, locked.
func mirrored(key string) *memState {
	mirror.Lock()
	m := mirror.m[key]
	if m == nil {
		m = &memState{}
		mirror.m[key] = m
	}
	mirror.Unlock()
	m.Lock()
	return m
}

// windowKey identifies a window's files: its end and its ranges.
func windowKey(w FileSet) string {
	return fmt.Sprintf("%d %v %d", w.WindowEnd, w.Ranges, len(w.Files))
}

// union returns a followed by the windows of b that a does not hold.
func union(a, b []FileSet) []FileSet {
	seen := make(map[string]bool, len(a))
	for _, w := range a {
		seen[windowKey(w)] = true
	}
	for _, w := range b {
		if k := windowKey(w); !seen[k] {
			seen[k] = true
			a = append(a, w)
		}
	}
	return a
}

func (f *commitFn) Setup(ctx context.Context) error {
	start, ids := f.Start, f.TopicIDs
	if start == nil {
		start = offsets.Offsets{}
	}
	return Retry(ctx, defaultBackoff, "open catalog", f.Ident, func() error {
		cat, err := f.Catalog.OpenExisting(ctx)
		if err != nil {
			return err
		}
		tableSeen(f.Ident)
		f.c = &committer{cat: cat, open: f.Catalog.Open, ident: f.Ident, pipeline: f.Pipeline, start: start, ids: ids, beforeCommit: beforeCommitPoint(f.Ident),
			progressEvery: time.Duration(f.ProgressEvery), upsertKey: f.UpsertKey, upsertPartition: f.UpsertPartition, upsertOffset: f.UpsertOffset}
		return nil
	})
}

func (f *commitFn) ProcessElement(ctx context.Context, sp state.Provider, key string, w FileSet, emit func(Commit)) error {
	m := mirrored(f.Run + "\x00" + key)
	defer m.Unlock()
	pending, _, err := f.Pending.Read(sp)
	if err != nil {
		return err
	}
	if len(m.running) > 0 {
		// A bundle of this key that ran beside this one may have committed
		// windows that this state still lists: the mirror's offsets are past
		// them. They are done, not replays: drop them here rather than
		// report them again as duplicates. (w itself is never dropped: a
		// window the runner delivers twice is reported as a duplicate.)
		pending = slices.DeleteFunc(pending, func(p FileSet) bool {
			st, err := classify(p, m.running, offsets.Offsets{})
			return err == nil && st == windowDuplicate
		})
	}
	pending = union(union(pending, m.pending), []FileSet{w})
	running := m.running.Clone()
	if s, ok, err := f.Running.Read(sp); err != nil {
		return err
	} else if ok {
		held, err := decodeOffsets(s)
		if err != nil {
			return err
		}
		running.Max(held)
	}
	rest, running, done, err := f.c.process(ctx, pending, running)
	m.pending, m.running = append([]FileSet(nil), rest...), running.Clone()
	stop.AtEnd("iceberg "+f.Ident+" "+f.Run+" "+key, f.recordAtEnd(m))
	for _, c := range done {
		emit(c)
	}
	waiting := 0
	for _, w := range rest {
		waiting += len(w.Files)
	}
	uncommittedFiles.WithLabelValues(f.Ident).Set(float64(waiting))
	if err != nil {
		return err
	}
	if err := f.Pending.Clear(sp); err != nil {
		return err
	}
	for _, w := range rest {
		if err := f.Pending.Add(sp, w); err != nil {
			return err
		}
	}
	return f.Running.Write(sp, running.Encode())
}

// recordAtEnd returns what the committer does once the run that a clean
// stop ended has returned (internal/stop.AtEnd): record in the table's
// progress the running offsets that m, the key's mirror, holds. Windows
// without rows for the table advance them without a commit, and are
// recorded at most once per progress interval while the run goes on; this
// records the last of them, so the next run starts where this one stopped.
// It opens its own catalog: the DoFn's may be torn down by then.
func (f *commitFn) recordAtEnd(m *memState) func(context.Context) error {
	return func(ctx context.Context) error {
		m.Lock()
		running := m.running.Clone()
		m.Unlock()
		if len(running) == 0 {
			return nil
		}
		cat, err := f.Catalog.OpenExisting(ctx)
		if err != nil {
			return err
		}
		defer CloseCatalog(cat)
		c := &committer{cat: cat, open: f.Catalog.Open, ident: f.Ident, pipeline: f.Pipeline, ids: f.TopicIDs}
		return c.recordProgress(ctx, running)
	}
}

func (f *commitFn) Teardown() {
	if f.c != nil {
		CloseCatalog(f.c.cat)
	}
}

// beforeCommitPoint is the test point inject.BeforeCommit(ident): a test
// makes the committer fail there as a crash between writing a window's
// files and committing them would.
func beforeCommitPoint(ident string) func(FileSet) error {
	point := inject.BeforeCommit(ident)
	return func(w FileSet) error { return inject.Check(point, w) }
}

// newRunID returns a random id for one construction of Write.
func newRunID() string {
	return strconv.FormatUint(rand.Uint64(), 36)
}
