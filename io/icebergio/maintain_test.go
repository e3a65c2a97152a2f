package icebergio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	icerows "github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/testing/wait"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/maintain"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// mRow is the row of the maintenance tests: nulls, binary and a
// timestamp, so that a rewrite that lost any of them would show.
type mRow struct {
	Key       string  `iceberg:"key,required"`
	Note      *string `iceberg:"note"`
	Payload   []byte  `iceberg:"payload"`
	At        int64   `iceberg:"at,required,timestamptz"`
	Partition int32   `iceberg:"partition,required"`
	Offset    int64   `iceberg:"offset,required"`
}

type mBatch struct {
	r    offsets.Range
	rows []mRow
}

func (b mBatch) Range() offsets.Range  { return b.r }
func (b mBatch) RowSlice() any         { return b.rows }
func (b mBatch) RowOffset(i int) int64 { return b.rows[i].Offset }

const mTopic = "events"

var mBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// mEnv is a temporary catalog with table ns.t, partitioned by partition,
// and the writer and committer of one pipeline, as icebergio.Write runs them.
type mEnv struct {
	t     *testing.T
	cfg   icebergio.CatalogConfig
	cat   catalog.Catalog
	ident string
	dir   string

	mu      sync.Mutex
	running map[string]offsets.Offsets // pipeline -> offsets its committer holds
	rows    []mRow                     // every row committed
}

func newMEnv(t *testing.T) *mEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	e := &mEnv{t: t, dir: dir, ident: "ns.t", running: map[string]offsets.Offsets{},
		cfg: icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}}
	cat, err := e.cfg.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { icebergio.CloseCatalog(cat) })
	e.cat = cat
	tbl := tables.Table{Ident: e.ident, Row: mRow{}, Partition: []tables.PartitionField{{Column: "partition", Transform: "identity"}}}
	if _, err := icebergio.EnsureTable(ctx, cat, tbl); err != nil {
		t.Fatal(err)
	}
	return e
}

// mRowsOf makes the rows of offsets [start, end) of a partition of topic.
func mRowsOf(topic string, p int32, start, end int64) []mRow {
	var out []mRow
	for off := start; off < end; off++ {
		r := mRow{Key: fmt.Sprintf("%s/%d/%d", topic, p, off), At: mBase.UnixMicro() + off*1000, Partition: p, Offset: off}
		if off%2 == 1 {
			n := fmt.Sprintf("note\t%d", off)
			r.Note = &n
		}
		switch off % 3 {
		case 1:
			r.Payload = []byte{}
		case 2:
			r.Payload = []byte{0, 0xff, byte(off)}
		}
		out = append(out, r)
	}
	return out
}

// write runs the real writer over n rows of each partition, as one bundle
// of window w (1-based, 1s windows), and returns what the committer gets.
func (e *mEnv) write(ctx context.Context, pipeline, topic string, w int, n int64, parts ...int32) (icebergio.FileSet, []mRow, error) {
	end := mBase.Add(time.Duration(w) * time.Second)
	var rows []mRow
	var batches []icebergio.Batch
	for _, p := range parts {
		start := int64(w-1) * n
		b := mBatch{r: offsets.Range{Topic: topic, Partition: p, Start: start, End: start + n}, rows: mRowsOf(topic, p, start, start+n)}
		rows = append(rows, b.rows...)
		batches = append(batches, b)
	}
	out, _, err := icebergio.WriteWindow(ctx, e.cfg, e.ident, pipeline, end, time.Second, batches...)
	if err != nil {
		return icebergio.FileSet{}, nil, err
	}
	return out, rows, nil
}

// commitWindow writes and commits window w of pipeline through the real
// writer and committer.
func (e *mEnv) commitWindow(ctx context.Context, pipeline, topic string, w int, n int64, parts ...int32) error {
	wf, rows, err := e.write(ctx, pipeline, topic, w, n, parts...)
	if err != nil {
		return err
	}
	e.mu.Lock()
	running := e.running[pipeline]
	e.mu.Unlock()
	rest, running, done, err := icebergio.CommitWindows(ctx, e.cat, e.ident, pipeline,
		icebergio.Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond}, []icebergio.FileSet{wf}, running)
	if err != nil {
		return err
	}
	if len(rest) != 0 || len(done) != 1 || done[0].Outcome != "committed" {
		return fmt.Errorf("window %d: rest %d, done %+v", w, len(rest), done)
	}
	e.mu.Lock()
	e.running[pipeline] = running
	e.rows = append(e.rows, rows...)
	e.mu.Unlock()
	return nil
}

func (e *mEnv) mustCommit(pipeline, topic string, w int, n int64, parts ...int32) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.commitWindow(ctx, pipeline, topic, w, n, parts...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *mEnv) table() *table.Table {
	e.t.Helper()
	tbl, err := icebergio.LoadTable(context.Background(), e.cat, e.ident)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

// checkRows compares the table's rows, read with a scan, to every row
// committed, as a multiset.
// aged waits until every snapshot of the table is older than age by the
// wall clock, which maintain.ExpireSnapshots compares their timestamps with.
func (e *mEnv) aged(age time.Duration) {
	e.t.Helper()
	wait.For(e.t, 10*time.Second, func() error {
		var newest int64
		for _, s := range e.table().Metadata().Snapshots() {
			newest = max(newest, s.TimestampMs)
		}
		if d := time.Since(time.UnixMilli(newest)); d <= age {
			return fmt.Errorf("the newest snapshot is %v old, not older than %v", d, age)
		}
		return nil
	})
}

func (e *mEnv) checkRows() {
	e.t.Helper()
	var got []mRow
	if err := icebergio.ScanRows(context.Background(), e.cfg, e.ident, &got); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	want := append([]mRow(nil), e.rows...)
	e.mu.Unlock()
	byKey := cmpopts.SortSlices(func(a, b mRow) bool { return a.Key < b.Key })
	if diff := cmp.Diff(want, got, byKey, cmpopts.EquateEmpty()); diff != "" {
		e.t.Fatalf("rows differ (-committed +table):\n%s", diff)
	}
}

// offsets returns icebergio.CommittedOffsets of every pipeline, as strings.
func (e *mEnv) offsets() map[string]string {
	e.t.Helper()
	all, err := icebergio.AllCommittedOffsets(e.table())
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for p, o := range all {
		out[p] = o.String()
	}
	return out
}

// dataFiles lists the Parquet files under the table's data directory.
func (e *mEnv) dataFiles() []string {
	e.t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(e.dir, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var fastBackoff = icebergio.Backoff{Initial: time.Millisecond, Max: 50 * time.Millisecond}

// Compaction turns many small files into one per partition, keeps every
// row and the offsets, and its snapshot carries the pipeline's haade keys,
// so that the pipeline resumes from it and commits on top of it.
func TestCompactKeepsRowsAndOffsets(t *testing.T) {
	e := newMEnv(t)
	for w := 1; w <= 6; w++ {
		e.mustCommit("bronze", mTopic, w, 20, 0, 1)
	}
	if n := e.table().CurrentSnapshot().Summary.Properties["total-data-files"]; n != "12" {
		t.Fatalf("%s data files before compaction, want 12", n)
	}
	before := e.offsets()
	last := e.table().CurrentSnapshot().Summary.Properties

	ctx := context.Background()
	rep, err := maintain.Compact(ctx, e.cat, e.ident, maintain.CompactOptions{TargetFileSize: 1 << 20, MinInputFiles: 2}, fastBackoff)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Groups != 2 || rep.FilesRemoved != 12 || rep.FilesAdded != 2 || rep.DataFiles != 2 {
		t.Fatalf("report %+v, want 2 groups, 12 files replaced by 2", rep)
	}
	e.checkRows()
	if diff := cmp.Diff(before, e.offsets()); diff != "" {
		t.Fatalf("offsets changed (-before +after):\n%s", diff)
	}
	cur := e.table().CurrentSnapshot()
	if cur.SnapshotID != rep.Snapshot || cur.Summary.Operation != table.OpReplace {
		t.Fatalf("current snapshot %d %s, want the rewrite %d", cur.SnapshotID, cur.Summary.Operation, rep.Snapshot)
	}
	for _, k := range []string{icebergio.SummaryPipeline, icebergio.SummaryWindowEnd, icebergio.SummaryOffsets} {
		if cur.Summary.Properties[k] != last[k] {
			t.Errorf("rewrite snapshot %s=%q, want %q", k, cur.Summary.Properties[k], last[k])
		}
	}
	if !strings.HasPrefix(cur.Summary.Properties[maintain.SummaryMaintenance], "compact/") {
		t.Errorf("rewrite snapshot lacks %s", maintain.SummaryMaintenance)
	}

	// Nothing left to compact: a second run is a no-op.
	if rep, err := maintain.Compact(ctx, e.cat, e.ident, maintain.CompactOptions{TargetFileSize: 1 << 20, MinInputFiles: 2}, fastBackoff); err != nil || rep.Groups != 0 {
		t.Fatalf("second compaction: %+v, %v", rep, err)
	}
	// The pipeline goes on from the rewrite snapshot.
	e.mustCommit("bronze", mTopic, 7, 20, 0, 1)
	e.checkRows()
	if got := e.offsets()["bronze"]; got != "events/0=140 events/1=140 " {
		t.Fatalf("offsets after window 7: %q", got)
	}
}

// Expiry keeps the newest snapshot with each pipeline's offsets, and every
// snapshot after it, however old and whatever --retain-last says; older
// ones go, and so do the files only they referenced.
func TestExpireKeepsOffsetsSnapshots(t *testing.T) {
	e := newMEnv(t)
	// Pipeline "old" commits windows 1-3 of its topic, then "bronze"
	// commits windows 1-4 of another: "old" resumes from its third snapshot.
	for w := 1; w <= 3; w++ {
		e.mustCommit("old", "other", w, 10, 0)
	}
	for w := 1; w <= 4; w++ {
		e.mustCommit("bronze", mTopic, w, 10, 0, 1)
	}
	snaps := ancestry(e.table())
	oldCheckpoint := snaps[4] // newest first: 4 of bronze, then old's third
	if oldCheckpoint.Summary.Properties[icebergio.SummaryPipeline] != "old" {
		t.Fatalf("snapshot %d is of %q", oldCheckpoint.SnapshotID, oldCheckpoint.Summary.Properties[icebergio.SummaryPipeline])
	}
	before := e.offsets()
	if len(before) != 2 {
		t.Fatalf("pipelines %v", before)
	}
	e.aged(time.Millisecond) // every snapshot is older than the age below
	ctx := context.Background()
	rep, err := maintain.ExpireSnapshots(ctx, e.cat, e.ident, time.Millisecond, 1, fastBackoff)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Before != 7 || rep.After != 5 || rep.Retained != 5 {
		t.Fatalf("report %+v, want 7 snapshots down to 5", rep)
	}
	if rep.Checkpoints["old"] != oldCheckpoint.SnapshotID || rep.Checkpoints["bronze"] != snaps[0].SnapshotID {
		t.Fatalf("checkpoints %v", rep.Checkpoints)
	}
	if got := ancestry(e.table()); len(got) != 5 || got[4].SnapshotID != oldCheckpoint.SnapshotID {
		t.Fatalf("ancestry after expiry has %d snapshots", len(got))
	}
	if diff := cmp.Diff(before, e.offsets()); diff != "" {
		t.Fatalf("offsets changed (-before +after):\n%s", diff)
	}
	e.checkRows()

	// After a compaction the rewrite snapshot carries bronze's offsets, so
	// only "old" holds the older snapshots back.
	if _, err := maintain.Compact(ctx, e.cat, e.ident, maintain.CompactOptions{TargetFileSize: 1 << 20, MinInputFiles: 2}, fastBackoff); err != nil {
		t.Fatal(err)
	}
	filesBefore := len(e.dataFiles())
	e.aged(time.Millisecond)
	if rep, err = maintain.ExpireSnapshots(ctx, e.cat, e.ident, time.Millisecond, 1, fastBackoff); err != nil {
		t.Fatal(err)
	}
	if rep.After != 6 {
		t.Fatalf("report %+v: want 6 snapshots kept (old's checkpoint and after)", rep)
	}
	if diff := cmp.Diff(before, e.offsets()); diff != "" {
		t.Fatalf("offsets changed (-before +after):\n%s", diff)
	}

	// With a single pipeline, everything before the rewrite goes, and the
	// small files with it.
	e2 := newMEnv(t)
	for w := 1; w <= 5; w++ {
		e2.mustCommit("bronze", mTopic, w, 10, 0)
	}
	before2 := e2.offsets()
	if _, err := maintain.Compact(ctx, e2.cat, e2.ident, maintain.CompactOptions{TargetFileSize: 1 << 20, MinInputFiles: 2}, fastBackoff); err != nil {
		t.Fatal(err)
	}
	if _, err := maintain.RewriteManifests(ctx, e2.cat, e2.ident, fastBackoff); err != nil {
		t.Fatal(err)
	}
	e2.aged(time.Millisecond)
	rep, err = maintain.ExpireSnapshots(ctx, e2.cat, e2.ident, time.Millisecond, 1, fastBackoff)
	if err != nil {
		t.Fatal(err)
	}
	if rep.After > 2 {
		t.Fatalf("report %+v: want the rewrite snapshot (and a manifest rewrite) only", rep)
	}
	if n := len(e2.dataFiles()); n != 1 {
		t.Fatalf("%d data files on disk after expiry, want the compacted one only (had %d before)", n, filesBefore)
	}
	if diff := cmp.Diff(before2, e2.offsets()); diff != "" {
		t.Fatalf("offsets changed (-before +after):\n%s", diff)
	}
	e2.checkRows()
}

// Expiry keeps the snapshots that a pipeline reading the table by snapshot
// (silver reading bronze) has not read yet, found in its own table's offsets.
func TestExpireKeepsUnreadSnapshots(t *testing.T) {
	e := newMEnv(t)
	for w := 1; w <= 5; w++ {
		e.mustCommit("bronze", mTopic, w, 10, 0)
	}
	// ns.down records that its pipeline "silver" reads ns.t's sequence 3 next.
	ctx := context.Background()
	down, err := icebergio.EnsureTable(ctx, e.cat, tables.Table{Ident: "ns.down", Row: mRow{}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := icerows.NewRowBuilder(nil, down.Schema(), mRow{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := b.Append(mRowsOf("x", 0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecordBatch()
	rdr, err := array.NewRecordReader(b.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	defer rdr.Release()
	read := offsets.Offsets{}
	read.Set(icebergio.SourceTopic(e.ident), 0, 3)
	tx := down.NewTransaction()
	if err := tx.Append(ctx, rdr, iceberg.Properties{icebergio.SummaryPipeline: "silver", icebergio.SummaryOffsets: read.Encode()}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	e.aged(time.Millisecond)
	rep, err := maintain.ExpireSnapshots(ctx, e.cat, e.ident, time.Millisecond, 1, fastBackoff)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"ns.down/silver": 3}, rep.Readers); diff != "" {
		t.Fatalf("readers (-want +got):\n%s", diff)
	}
	var seqs []int64
	for _, s := range ancestry(e.table()) {
		seqs = append(seqs, s.SequenceNumber)
	}
	if diff := cmp.Diff([]int64{5, 4, 3}, seqs); diff != "" {
		t.Fatalf("sequence numbers kept (-want +got):\n%s", diff)
	}
}

func ancestry(tbl *table.Table) []table.Snapshot {
	return table.AncestorsOf(tbl.CurrentSnapshot().SnapshotID, tbl.Metadata().SnapshotByID)
}

// Orphan cleanup deletes unreferenced files older than the age, keeps
// younger ones and every referenced file, and refuses an age under 1h.
func TestDeleteOrphans(t *testing.T) {
	e := newMEnv(t)
	e.mustCommit("bronze", mTopic, 1, 10, 0)
	committed := e.dataFiles()
	ctx := context.Background()
	// Two windows written and never committed: a crashed bundle's files.
	if _, _, err := e.write(ctx, "bronze", mTopic, 2, 10, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.write(ctx, "bronze", mTopic, 3, 10, 0); err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, f := range e.dataFiles() {
		if !slices.Contains(committed, f) {
			orphans = append(orphans, f)
		}
	}
	if len(orphans) != 2 {
		t.Fatalf("orphans %v", orphans)
	}
	old := time.Now().Add(-3 * time.Hour)
	// icebergio.Every file but the young orphan is 3h old, metadata included.
	err := filepath.WalkDir(filepath.Join(e.dir, "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == orphans[1] {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := maintain.DeleteOrphans(ctx, e.cat, e.ident, 30*time.Minute); !errors.Is(err, maintain.ErrUnsafeOrphanAge) {
		t.Fatalf("age 30m: %v, want maintain.ErrUnsafeOrphanAge", err)
	}
	rep, err := maintain.DeleteOrphans(ctx, e.cat, e.ident, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found != 1 || rep.Deleted != 1 {
		t.Fatalf("report %+v, want 1 orphan deleted", rep)
	}
	want := append(append([]string(nil), committed...), orphans[1])
	sort.Strings(want)
	if diff := cmp.Diff(want, e.dataFiles()); diff != "" {
		t.Fatalf("files left (-want +got):\n%s", diff)
	}
	e.checkRows()
	e.mustCommit("bronze", mTopic, 2, 10, 0) // the table still works
	e.checkRows()
}

// encode is the summary form of offsets (a JSON object), as the committer
// writes it.
func encode(o offsets.Offsets) string {
	b, _ := json.Marshal(o)
	return string(b)
}
