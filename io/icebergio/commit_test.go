package icebergio_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/prometheus/client_golang/prometheus"
)

// writeWindow writes batches with the real writer as one bundle of window
// n, and returns what the committer would receive.
func writeWindow(t *testing.T, sink *icebergio.Sink, n int, bs ...RowBatch) icebergio.FileSet {
	t.Helper()
	batches := make([]icebergio.Batch, len(bs))
	for i, b := range bs {
		batches[i] = b
	}
	w, ok, err := icebergio.WriteWindow(context.Background(), sink.Catalog, sink.Table.Ident, sink.Pipeline, windowEnd(n), time.Second, batches...)
	if err != nil {
		t.Fatalf("write window %d: %v", n, err)
	}
	if !ok {
		t.Fatalf("write window %d: the writer emitted nothing", n)
	}
	return w
}

// token is the haade.* part of a snapshot summary that a window of this
// test pipeline should carry.
func token(n int, offsets string) map[string]string {
	return map[string]string{
		icebergio.SummaryPipeline:  pipeline,
		icebergio.SummaryWindowEnd: windowEnd(n).Format(time.RFC3339),
		icebergio.SummaryOffsets:   offsets,
	}
}

func haadeSummaries(t *testing.T, cat catalog.Catalog, ident string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, s := range icebergtest.Snapshots(t, cat, ident) {
		out = append(out, s.Haade())
	}
	return out
}

// outcomes returns "window-end outcome rows" for each commit.
func outcomes(cs []icebergio.Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s %d", time.UnixMilli(c.WindowEnd).UTC().Format(time.RFC3339), c.Outcome, c.Rows))
	}
	return out
}

func outcome(n int, what string, rows int) string {
	return fmt.Sprintf("%s %s %d", windowEnd(n).Format(time.RFC3339), what, rows)
}

// threeWindows are the batches of three windows over two partitions, with
// gaps (offsets with no row) inside and between batches.
func threeWindows() [][]RowBatch {
	return [][]RowBatch{
		{batch(1, 0, 0, 10, 4), batch(1, 1, 0, 5)},
		{batch(2, 0, 10, 20, 10, 19), batch(2, 1, 5, 8, 5, 6, 7)}, // p1 has no row at all here
		{batch(3, 0, 20, 25), batch(3, 1, 8, 12)},
	}
}

func TestCommitterOutOfOrder(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "ooo")
	ws := threeWindows()
	w1, w2, w3 := writeWindow(t, sink, 1, ws[0]...), writeWindow(t, sink, 2, ws[1]...), writeWindow(t, sink, 3, ws[2]...)
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0, 1: 0}}, nil)

	// W3 first: it must wait for W1 and W2.
	pending, running, done, err := c.Process(ctx, []icebergio.FileSet{w3}, nil)
	if err != nil || len(done) != 0 || len(pending) != 1 {
		t.Fatalf("Process(W3) = %d pending, %v, %v; want W3 waiting", len(pending), outcomes(done), err)
	}
	if n := len(icebergtest.Snapshots(t, cat, sink.Table.Ident)); n != 0 {
		t.Fatalf("%d snapshots after W3 alone, want 0", n)
	}
	// W1 commits; W3 still waits for W2.
	pending, running, done, err = c.Process(ctx, append(pending, w1), running)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(1, "committed", 14)}, outcomes(done)); diff != "" {
		t.Fatalf("Process(W3, W1) (-want +got):\n%s", diff)
	}
	// W2 commits, then W3.
	pending, _, done2, err := c.Process(ctx, append(pending, w2), running)
	if err != nil || len(pending) != 0 {
		t.Fatalf("Process(W3, W2) = %d pending, %v", len(pending), err)
	}
	done = append(done, done2...)
	if diff := cmp.Diff([]string{outcome(1, "committed", 14), outcome(2, "committed", 8), outcome(3, "committed", 9)}, outcomes(done)); diff != "" {
		t.Fatalf("commits (-want +got):\n%s", diff)
	}

	want := []map[string]string{
		token(1, `{"events":{"0":10,"1":5}}`),
		token(2, `{"events":{"0":20,"1":8}}`),
		token(3, `{"events":{"0":25,"1":12}}`),
	}
	if diff := cmp.Diff(want, haadeSummaries(t, cat, sink.Table.Ident)); diff != "" {
		t.Errorf("snapshot summaries, oldest first (-want +got):\n%s", diff)
	}
	snaps := icebergtest.Snapshots(t, cat, sink.Table.Ident)
	for i, s := range snaps {
		if s.ID != done[i].SnapshotID || s.Operation != "append" {
			t.Errorf("snapshot %d: id %d %s, want %d append", i, s.ID, s.Operation, done[i].SnapshotID)
		}
	}
	var all []RowBatch
	for _, w := range ws {
		all = append(all, w...)
	}
	if diff := cmp.Diff(rowsOf(all...), icebergtest.Rows[Row](t, cat, sink.Table.Ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
	st, err := icebergio.Stat(ctx, cat, sink.Table.Ident, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(offsets.Offsets{topic: {0: 25, 1: 12}}, st.Offsets); diff != "" || st.Rows != 31 || st.Snapshots != 3 {
		t.Errorf("Stat = %+v, want 31 rows, 3 snapshots, offsets 25 and 12 (%s)", st, diff)
	}
}

func TestCommitterReplay(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "replay")
	ws := threeWindows()
	w1, w2 := writeWindow(t, sink, 1, ws[0]...), writeWindow(t, sink, 2, ws[1]...)
	start := offsets.Offsets{topic: {0: 0, 1: 0}}
	ident := sink.Table.Ident

	c := icebergio.NewCommitter(cat, ident, pipeline, start, nil)
	if _, _, done, err := c.Process(ctx, []icebergio.FileSet{w1}, nil); err != nil || len(done) != 1 {
		t.Fatalf("Process(W1) = %v, %v", outcomes(done), err)
	}

	t.Run("window already in the table", func(t *testing.T) {
		// A restarted committer has lost its state; the runner replays W1.
		c := icebergio.NewCommitter(cat, ident, pipeline, start, nil)
		_, running, done, err := c.Process(ctx, []icebergio.FileSet{w1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{outcome(1, "duplicate", 14)}, outcomes(done)); diff != "" {
			t.Errorf("replayed W1 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(offsets.Offsets{topic: {0: 10, 1: 5}}, running); diff != "" {
			t.Errorf("running offsets come from the table (-want +got):\n%s", diff)
		}
	})

	t.Run("same token committed again", func(t *testing.T) {
		// commit itself, asked twice for W1, finds the token in the history.
		before := len(icebergtest.Snapshots(t, cat, ident))
		id, replayed, err := c.CommitWindow(ctx, w1, offsets.Offsets{topic: {0: 10, 1: 5}})
		if err != nil || !replayed {
			t.Fatalf("CommitWindow(W1) again = %d, %v, %v; want replayed", id, replayed, err)
		}
		if after := len(icebergtest.Snapshots(t, cat, ident)); after != before {
			t.Errorf("%d snapshots after a replayed commit, want %d", after, before)
		}
	})

	t.Run("another attempt commits the window first", func(t *testing.T) {
		// Between this committer's load and its commit, another attempt of
		// the job commits W2: the commit conflicts, reloads, and finds the
		// token instead of committing W2 twice.
		c, otherDone := racedCommitter(ctx, cat, ident, start, w2)
		_, _, done, err := c.Process(ctx, []icebergio.FileSet{w2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{outcome(2, "committed", 8)}, outcomes(*otherDone)); diff != "" {
			t.Fatalf("the other attempt (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{outcome(2, "replayed", 8)}, outcomes(done)); diff != "" {
			t.Errorf("this attempt (-want +got):\n%s", diff)
		}
		if done[0].SnapshotID != (*otherDone)[0].SnapshotID {
			t.Errorf("replayed snapshot %d, want the other attempt's %d", done[0].SnapshotID, (*otherDone)[0].SnapshotID)
		}
	})

	want := []map[string]string{token(1, `{"events":{"0":10,"1":5}}`), token(2, `{"events":{"0":20,"1":8}}`)}
	if diff := cmp.Diff(want, haadeSummaries(t, cat, ident)); diff != "" {
		t.Errorf("snapshot summaries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rowsOf(append(ws[0], ws[1]...)...), icebergtest.Rows[Row](t, cat, ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
}

// racedCommitter returns a committer whose first commit loses a race:
// after its checks and before its commit, another attempt of the job
// commits ws. What that attempt did is in *otherDone once it has.
func racedCommitter(ctx context.Context, cat catalog.Catalog, ident string, start offsets.Offsets, ws ...icebergio.FileSet) (c *icebergio.Committer, otherDone *[]icebergio.Commit) {
	other := icebergio.NewCommitter(cat, ident, pipeline, start, nil)
	otherDone = new([]icebergio.Commit)
	calls := 0
	c = icebergio.NewCommitter(cat, ident, pipeline, start, func(icebergio.FileSet) error {
		calls++
		if calls > 1 {
			return nil
		}
		_, _, done, err := other.Process(ctx, ws, nil)
		*otherDone = done
		return err
	})
	return c, otherDone
}

func TestCommitterEmptyWindow(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "empty")
	// W2 covers offsets of both partitions but carries no row: every
	// record in it was a gap, or went to another table.
	b1 := []RowBatch{batch(1, 0, 0, 3), batch(1, 1, 0, 2)}
	b2 := []RowBatch{batch(2, 0, 3, 6, 3, 4, 5), batch(2, 1, 2, 4, 2, 3)}
	b3 := []RowBatch{batch(3, 0, 6, 8)}
	w1, w2, w3 := writeWindow(t, sink, 1, b1...), writeWindow(t, sink, 2, b2...), writeWindow(t, sink, 3, b3...)
	if len(w2.Files) != 0 || w2.Rows != 0 || len(w2.Ranges) != 2 {
		t.Fatalf("W2 = %d files, %d rows, ranges %v; want no file, no row, two ranges", len(w2.Files), w2.Rows, w2.Ranges)
	}
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0, 1: 0}}, nil)

	pending, running, done, err := c.Process(ctx, []icebergio.FileSet{w2, w1}, nil)
	if err != nil || len(pending) != 0 {
		t.Fatalf("Process(W2, W1) = %d pending, %v", len(pending), err)
	}
	if diff := cmp.Diff([]string{outcome(1, "committed", 5), outcome(2, "empty", 0)}, outcomes(done)); diff != "" {
		t.Fatalf("commits (-want +got):\n%s", diff)
	}
	if done[1].SnapshotID != 0 {
		t.Errorf("the empty window reports snapshot %d, want 0", done[1].SnapshotID)
	}
	if diff := cmp.Diff(offsets.Offsets{topic: {0: 6, 1: 4}}, running); diff != "" {
		t.Errorf("running offsets after the empty window (-want +got):\n%s", diff)
	}
	if n := len(icebergtest.Snapshots(t, cat, sink.Table.Ident)); n != 1 {
		t.Errorf("%d snapshots after W1 and the empty W2, want 1", n)
	}
	// W3 continues from where the empty window left the offsets, and its
	// snapshot carries them, p1 included.
	_, _, done, err = c.Process(ctx, []icebergio.FileSet{w3}, running)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(3, "committed", 2)}, outcomes(done)); diff != "" {
		t.Fatalf("W3 (-want +got):\n%s", diff)
	}
	want := []map[string]string{token(1, `{"events":{"0":3,"1":2}}`), token(3, `{"events":{"0":8,"1":4}}`)}
	if diff := cmp.Diff(want, haadeSummaries(t, cat, sink.Table.Ident)); diff != "" {
		t.Errorf("snapshot summaries (-want +got):\n%s", diff)
	}
}

func TestCommitterOverlap(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "overlap")
	w1 := writeWindow(t, sink, 1, batch(1, 0, 0, 10))
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0}}, nil)
	_, running, _, err := c.Process(ctx, []icebergio.FileSet{w1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w2 := writeWindow(t, sink, 2, batch(2, 0, 10, 20))
	tests := []struct {
		name   string
		ranges []offsets.Range
	}{
		{"straddles the committed offset", []offsets.Range{{Topic: topic, Partition: 0, Start: 5, End: 20}}},
		{"a hole inside the window", []offsets.Range{{Topic: topic, Partition: 0, Start: 10, End: 12}, {Topic: topic, Partition: 0, Start: 14, End: 20}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := w2
			bad.Ranges = tc.ranges
			pending, _, done, err := c.Process(ctx, []icebergio.FileSet{bad}, running)
			if !errors.Is(err, icebergio.ErrOffsetsOverlap) {
				t.Fatalf("Process = %v, %v; want ErrOffsetsOverlap", outcomes(done), err)
			}
			if len(pending) != 1 {
				t.Errorf("%d windows pending after the error, want the bad one kept", len(pending))
			}
			if n := len(icebergtest.Snapshots(t, cat, sink.Table.Ident)); n != 1 {
				t.Errorf("%d snapshots, want 1", n)
			}
		})
	}
}

func TestCommitterCrashBeforeCommit(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "crash")
	w1, w2 := writeWindow(t, sink, 1, batch(1, 0, 0, 5)), writeWindow(t, sink, 2, batch(2, 0, 5, 9))
	crash := errors.New("injected crash")
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0}}, func(w icebergio.FileSet) error {
		if w.WindowEnd == windowEnd(2).UnixMilli() {
			return crash
		}
		return nil
	})
	pending, running, done, err := c.Process(ctx, []icebergio.FileSet{w2, w1}, nil)
	if !errors.Is(err, crash) {
		t.Fatalf("Process = %v; want the injected crash", err)
	}
	if diff := cmp.Diff([]string{outcome(1, "committed", 5)}, outcomes(done)); diff != "" {
		t.Errorf("commits before the crash (-want +got):\n%s", diff)
	}
	if len(pending) != 1 || pending[0].WindowEnd != w2.WindowEnd {
		t.Errorf("pending after the crash = %d windows, want W2", len(pending))
	}
	if diff := cmp.Diff(offsets.Offsets{topic: {0: 5}}, running); diff != "" {
		t.Errorf("running offsets after the crash (-want +got):\n%s", diff)
	}
	// A new committer (the restarted job) takes W2 again.
	c = icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0}}, nil)
	if _, _, done, err = c.Process(ctx, pending, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(2, "committed", 4)}, outcomes(done)); diff != "" {
		t.Errorf("commits after the restart (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rowsOf(batch(1, 0, 0, 5), batch(2, 0, 5, 9)), icebergtest.Rows[Row](t, cat, sink.Table.Ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
}

func TestWriterDropsCommittedRows(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "dedupe")
	w1 := writeWindow(t, sink, 1, batch(1, 0, 0, 10))
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0}}, nil)
	if _, _, _, err := c.Process(ctx, []icebergio.FileSet{w1}, nil); err != nil {
		t.Fatal(err)
	}
	// A replayed batch wholly in the table gives the writer nothing to emit.
	if _, ok, err := icebergio.WriteWindow(ctx, sink.Catalog, sink.Table.Ident, pipeline, windowEnd(1), time.Second, batch(1, 0, 0, 10)); err != nil || ok {
		t.Errorf("WriteWindow of committed rows = %v, %v; want nothing emitted", ok, err)
	}
	// A batch that straddles the table's offset keeps only the new rows,
	// and its range starts at that offset.
	w2 := writeWindow(t, sink, 2, batch(2, 0, 5, 15, 12))
	if diff := cmp.Diff([]offsets.Range{{Topic: topic, Partition: 0, Start: 10, End: 15}}, w2.Ranges); diff != "" || w2.Rows != 4 {
		t.Errorf("straddling batch: %d rows, ranges (-want +got):\n%s", w2.Rows, diff)
	}
	if _, _, _, err := c.Process(ctx, []icebergio.FileSet{w2}, nil); err != nil {
		t.Fatal(err)
	}
	want := rowsOf(batch(1, 0, 0, 10), batch(2, 0, 10, 15, 12))
	if diff := cmp.Diff(want, icebergtest.Rows[Row](t, cat, sink.Table.Ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
	// Null payloads and empty ones survive the round trip distinctly.
	got := icebergtest.Rows[Row](t, cat, sink.Table.Ident)
	for _, r := range got {
		switch {
		case r.Offset%3 == 0 && r.Payload != nil:
			t.Errorf("row %s: payload %q, want null", r.Key, r.Payload)
		case r.Offset%3 == 1 && (r.Payload == nil || len(r.Payload) != 0):
			t.Errorf("row %s: payload %#v, want empty, not null", r.Key, r.Payload)
		}
	}
}

// A window whose rows reached the committer without data files is refused:
// advancing its offsets would lose the rows in silence.
func TestCommitterRefusesRowsWithoutFiles(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "lost")
	w1 := writeWindow(t, sink, 1, batch(1, 0, 0, 3))
	w1.Files = [][]byte{}
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0}}, nil)
	pending, running, _, err := c.Process(ctx, []icebergio.FileSet{w1}, nil)
	if !errors.Is(err, icebergio.ErrLostRows) {
		t.Fatalf("Process(rows without files) = %v, want ErrLostRows", err)
	}
	if len(pending) != 1 {
		t.Errorf("%d windows still pending, want the refused one", len(pending))
	}
	if _, ok := running.Next(topic, 0); ok {
		t.Errorf("running offsets advanced past lost rows: %v", running)
	}
	if n := len(icebergtest.Snapshots(t, cat, sink.Table.Ident)); n != 0 {
		t.Errorf("%d snapshots, want none", n)
	}
}

// TestCommitterLatePane: a late pane of window 2 (files of a bundle that
// ended after the watermark passed the window) arrives after the window's
// first pane, which cannot commit without it. The late pane commits first,
// then the rest of the window, then window 3: nothing waits forever.
func TestCommitterLatePane(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "late")
	w1 := writeWindow(t, sink, 1, batch(1, 0, 0, 10), batch(1, 1, 0, 5))
	late := []RowBatch{batch(2, 0, 10, 15)}
	onTime := []RowBatch{batch(2, 0, 15, 20), batch(2, 1, 5, 8)}
	w2late, w2 := writeWindow(t, sink, 2, late...), writeWindow(t, sink, 2, onTime...)
	w3 := writeWindow(t, sink, 3, batch(3, 0, 20, 25), batch(3, 1, 8, 12))
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0, 1: 0}}, nil)

	pending, running, done, err := c.Process(ctx, []icebergio.FileSet{w1, w2, w3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(1, "committed", 15)}, outcomes(done)); diff != "" || len(pending) != 2 {
		t.Fatalf("before the late pane: %d pending, commits (-want +got):\n%s", len(pending), diff)
	}
	pending, _, done, err = c.Process(ctx, append(pending, w2late), running)
	if err != nil || len(pending) != 0 {
		t.Fatalf("after the late pane: %d pending, %v", len(pending), err)
	}
	want := []string{outcome(2, "committed", 5), outcome(2, "committed", 8), outcome(3, "committed", 9)}
	if diff := cmp.Diff(want, outcomes(done)); diff != "" {
		t.Fatalf("commits after the late pane (-want +got):\n%s", diff)
	}
	wantTokens := []map[string]string{
		token(1, `{"events":{"0":10,"1":5}}`),
		token(2, `{"events":{"0":15,"1":5}}`),
		token(2, `{"events":{"0":20,"1":8}}`),
		token(3, `{"events":{"0":25,"1":12}}`),
	}
	if diff := cmp.Diff(wantTokens, haadeSummaries(t, cat, sink.Table.Ident)); diff != "" {
		t.Errorf("snapshot summaries, oldest first (-want +got):\n%s", diff)
	}
	all := append(append([]RowBatch{batch(1, 0, 0, 10), batch(1, 1, 0, 5)}, late...), onTime...)
	all = append(all, batch(3, 0, 20, 25), batch(3, 1, 8, 12))
	if diff := cmp.Diff(rowsOf(all...), icebergtest.Rows[Row](t, cat, sink.Table.Ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
}

// restLikeCatalog answers a failed commit requirement the way an Iceberg
// REST catalog does (409, CommitFailedException): with table.ErrCommitFailed,
// which iceberg-go retries on its own when the table's
// commit.retry.num-retries asks it to. The SQL catalog wraps only its row race
// that way.
type restLikeCatalog struct{ catalog.Catalog }

func (c restLikeCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, err
	}
	return table.New(id, tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c restLikeCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	m, loc, err := c.Catalog.CommitTable(ctx, id, reqs, ups)
	if err != nil && strings.Contains(err.Error(), "requirement failed") {
		err = fmt.Errorf("%w: %w", table.ErrCommitFailed, err)
	}
	return m, loc, err
}

// TestCommitterPinsItsBase: another engine's user may set
// commit.retry.num-retries on the table (Spark's ALTER TABLE ... SET
// TBLPROPERTIES, for their own concurrent writers). iceberg-go then answers a
// commit conflict by replaying the transaction on the new head: an append of
// a window that another attempt has just committed would go in twice, and its
// progress property would move back. The committer's commits are pinned to
// the snapshot they were checked against, so a conflict comes back to it: it
// reloads and finds the other attempt's commit.
func TestCommitterPinsItsBase(t *testing.T) {
	ctx := context.Background()
	sink, sqlCat := testTable(t, "pinned")
	cat := restLikeCatalog{sqlCat}
	ident := sink.Table.Ident
	tx := icebergtest.Load(t, cat, ident).NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{table.CommitNumRetriesKey: "4", table.CommitMinRetryWaitMsKey: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ws := threeWindows()
	w1, w2, w3 := writeWindow(t, sink, 1, ws[0]...), writeWindow(t, sink, 2, ws[1]...), writeWindow(t, sink, 3, ws[2]...)
	start := offsets.Offsets{topic: {0: 0, 1: 0}}
	if _, _, _, err := icebergio.NewCommitter(cat, ident, pipeline, start, nil).Process(ctx, []icebergio.FileSet{w1}, nil); err != nil {
		t.Fatal(err)
	}

	// Between this attempt's check and its commit of W2, another attempt
	// commits W2 and W3.
	c, otherDone := racedCommitter(ctx, cat, ident, start, w2, w3)
	_, _, done, err := c.Process(ctx, []icebergio.FileSet{w2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(2, "committed", 8), outcome(3, "committed", 9)}, outcomes(*otherDone)); diff != "" {
		t.Fatalf("the other attempt (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{outcome(2, "replayed", 8)}, outcomes(done)); diff != "" {
		t.Errorf("this attempt (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rowsOf(append(append(ws[0], ws[1]...), ws[2]...)...), icebergtest.Rows[Row](t, cat, ident), sortRows); diff != "" {
		t.Errorf("rows in the table: each once (-want +got):\n%s", diff)
	}
	st, err := icebergio.Stat(ctx, cat, ident, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(offsets.Offsets{topic: {0: 25, 1: 12}}, st.Offsets); diff != "" {
		t.Errorf("committed offsets (-want +got):\n%s", diff)
	}
	p := icebergtest.Load(t, cat, ident).Properties()[icebergio.ProgressProperty(pipeline)]
	if !strings.Contains(p, `"0":25`) || !strings.Contains(p, `"1":12`) {
		t.Errorf("progress property %q: want the offsets 25 and 12 of the last commit, not moved back", p)
	}
}

// A window with no row for a table leaves the table current: the "seconds
// since the last commit" clock restarts as after a commit, so that HaadeNoCommit
// does not fire for a dead-letter table that no record was for.
func TestEmptyWindowMarksTheCommitClock(t *testing.T) {
	ctx := context.Background()
	sink, cat := testTable(t, "empty_clock")
	w := writeWindow(t, sink, 2, batch(2, 0, 3, 6, 3, 4, 5), batch(2, 1, 2, 4, 2, 3)) // every offset a gap
	if len(w.Files) != 0 {
		t.Fatalf("the window has %d files, want none", len(w.Files))
	}
	clock := func() []float64 {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(icebergio.Collectors()...)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, mf := range mfs {
			if mf.GetName() != "haade_seconds_since_last_commit" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "table" && l.GetValue() == sink.Table.Ident {
						got = append(got, m.GetGauge().GetValue())
					}
				}
			}
		}
		return got
	}
	if got := clock(); len(got) != 0 {
		t.Fatalf("the clock of %s before any window: %v, want none", sink.Table.Ident, got)
	}
	c := icebergio.NewCommitter(cat, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 3, 1: 2}}, nil)
	_, _, done, err := c.Process(ctx, []icebergio.FileSet{w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{outcome(2, "empty", 0)}, outcomes(done)); diff != "" {
		t.Fatalf("commits (-want +got):\n%s", diff)
	}
	if got := clock(); len(got) != 1 || got[0] < 0 || got[0] > 60 {
		t.Errorf("the clock of %s after an empty window: %v, want one value of seconds just past", sink.Table.Ident, got)
	}
}
