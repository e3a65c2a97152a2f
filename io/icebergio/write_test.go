package icebergio_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
)

func init() {
	register.Function2x0(stamp)
	register.Emitter2[beam.EventTime, RowBatch]()
	register.Function1x1(withoutSnapshotID)
}

// stamp gives a batch its event time, as the Kafka read does.
func stamp(b RowBatch, emit func(beam.EventTime, RowBatch)) {
	emit(beam.EventTime(b.EventTime), b)
}

// withoutSnapshotID drops the one field of a Commit that a test cannot know.
func withoutSnapshotID(c icebergio.Commit) icebergio.Commit {
	c.SnapshotID = 0
	return c
}

// writePipeline builds CreateList(batches) -> stamp -> Write and returns
// the pipeline and the Commit PCollection.
func writePipeline(sink *icebergio.Sink, start offsets.Offsets, batches []RowBatch) (*beam.Pipeline, beam.Scope, beam.PCollection) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.ParDo(s, stamp, beam.CreateList(s, batches))
	return p, s, icebergio.Write(s, sink, start, in)
}

func flatten(ws [][]RowBatch) []RowBatch {
	var out []RowBatch
	for _, w := range ws {
		out = append(out, w...)
	}
	return out
}

func TestWrite(t *testing.T) {
	sink, cat := testTable(t, "write")
	ws := threeWindows()
	start := offsets.Offsets{topic: {0: 0, 1: 0}}
	p, s, commits := writePipeline(sink, start, flatten(ws))
	ident := sink.Table.Ident
	passert.Equals(s, beam.ParDo(s, withoutSnapshotID, commits),
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(1).UnixMilli(), Rows: 14, Files: 1, Outcome: "committed", Offsets: "events/0=10 events/1=5 "},
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(2).UnixMilli(), Rows: 8, Files: 1, Outcome: "committed", Offsets: "events/0=20 events/1=8 "},
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(3).UnixMilli(), Rows: 9, Files: 1, Outcome: "committed", Offsets: "events/0=25 events/1=12 "},
	)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	checkThreeWindows(t, cat, ident, ws)
}

// TestWriteCrashBeforeCommit crashes the committer of the second window
// after its data files are written; the run fails. The next run, fed the
// source again, must leave every row in the table exactly once.
func TestWriteCrashBeforeCommit(t *testing.T) {
	tests := []struct {
		name   string
		replay func(ws [][]RowBatch) ([]RowBatch, offsets.Offsets)
	}{
		{"the next run replays everything", func(ws [][]RowBatch) ([]RowBatch, offsets.Offsets) {
			return flatten(ws), offsets.Offsets{topic: {0: 0, 1: 0}}
		}},
		{"the next run starts at the table's offsets", func(ws [][]RowBatch) ([]RowBatch, offsets.Offsets) {
			return flatten(ws[1:]), offsets.Offsets{topic: {0: 10, 1: 5}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink, cat := testTable(t, "crash")
			ident := sink.Table.Ident
			ws := threeWindows()
			crash := errors.New("injected crash before commit")
			remove := inject.At(inject.BeforeCommit(ident), func(w icebergio.FileSet) error {
				if w.WindowEnd == windowEnd(2).UnixMilli() {
					return crash
				}
				return nil
			})
			t.Cleanup(remove)
			p, _, _ := writePipeline(sink, offsets.Offsets{topic: {0: 0, 1: 0}}, flatten(ws))
			if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), crash.Error()) {
				t.Fatalf("the run with a crash before the second commit returned %v, want the injected crash", err)
			}
			if diff := cmp.Diff([]map[string]string{token(1, `{"events":{"0":10,"1":5}}`)}, haadeSummaries(t, cat, ident)); diff != "" {
				t.Fatalf("snapshots after the crash (-want +got):\n%s", diff)
			}
			remove()

			// The next run reopens the sink as a pipeline does at start.
			sink2, err := icebergio.Open(t.Context(), sink.Catalog, sink.Table, pipeline)
			if err != nil {
				t.Fatal(err)
			}
			sink2.Interval = sink.Interval
			if diff := cmp.Diff(offsets.Offsets{topic: {0: 10, 1: 5}}, sink2.Committed); diff != "" {
				t.Errorf("committed offsets at the restart (-want +got):\n%s", diff)
			}
			batches, start := tc.replay(ws)
			p, s, commits := writePipeline(sink2, start, batches)
			passert.Count(s, commits, "commits", 2) // W2 and W3; W1 is wholly dropped by the writers
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}
			checkThreeWindows(t, cat, ident, ws)
		})
	}
}

// checkThreeWindows checks that table ident holds every row of
// threeWindows' windows ws exactly once, in one snapshot per window, each
// with its window's offsets.
func checkThreeWindows(t *testing.T, cat catalog.Catalog, ident string, ws [][]RowBatch) {
	t.Helper()
	if diff := cmp.Diff(rowsOf(flatten(ws)...), icebergtest.Rows[Row](t, cat, ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
	want := []map[string]string{
		token(1, `{"events":{"0":10,"1":5}}`),
		token(2, `{"events":{"0":20,"1":8}}`),
		token(3, `{"events":{"0":25,"1":12}}`),
	}
	if diff := cmp.Diff(want, haadeSummaries(t, cat, ident)); diff != "" {
		t.Errorf("snapshot summaries, oldest first (-want +got):\n%s", diff)
	}
}

// TestWriteLateBatch: a batch of window 1 reaches the writer after the
// watermark passed windows 1 and 2, as a bundle that ends late does. Its
// files are a late pane, not dropped: every row is committed, the late
// rows after window 1's first pane and before window 3.
func TestWriteLateBatch(t *testing.T) {
	sink, cat := testTable(t, "late")
	ident := sink.Table.Ident
	ts := func(b RowBatch) mtime.Time { return mtime.Time(b.EventTime) }
	early, late, next := batch(1, 0, 0, 10), batch(1, 0, 10, 20), batch(3, 0, 20, 25)
	c := teststream.NewConfig()
	if err := c.AddElements(int64(ts(early)), early); err != nil {
		t.Fatal(err)
	}
	if err := c.AdvanceWatermark(windowEnd(2).UnixMilli() + 1); err != nil {
		t.Fatal(err)
	}
	for _, b := range []RowBatch{late, next} {
		if err := c.AddElements(int64(ts(b)), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	commits := icebergio.Write(s, sink, offsets.Offsets{topic: {0: 0}}, beam.ParDo(s, stamp, teststream.Create(s, c)))
	passert.Equals(s, beam.ParDo(s, withoutSnapshotID, commits),
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(1).UnixMilli(), Rows: 10, Files: 1, Outcome: "committed", Offsets: "events/0=10 "},
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(1).UnixMilli(), Rows: 10, Files: 1, Outcome: "committed", Offsets: "events/0=20 "},
		icebergio.Commit{Table: ident, WindowEnd: windowEnd(3).UnixMilli(), Rows: 5, Files: 1, Outcome: "committed", Offsets: "events/0=25 "},
	)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rowsOf(early, late, next), icebergtest.Rows[Row](t, cat, ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
}

// TestWriteWindowsAfterTheEnd: every window of a stream fires at once when
// its watermark jumps to the end of time, as a bounded read's does, and
// reaches the committer in any order. Prism garbage-collects the state of
// the global window once its watermark has passed it, so a window kept
// waiting in state between two bundles would vanish: all must commit.
func TestWriteWindowsAfterTheEnd(t *testing.T) {
	sink, cat := testTable(t, "atend")
	ident := sink.Table.Ident
	const n = 12
	c := teststream.NewConfig()
	var all []RowBatch
	var want []any
	for i := range n {
		b := batch(i+1, 0, int64(10*i), int64(10*i+10))
		all = append(all, b)
		if err := c.AddElements(b.EventTime, b); err != nil {
			t.Fatal(err)
		}
		want = append(want, icebergio.Commit{Table: ident, WindowEnd: windowEnd(i + 1).UnixMilli(), Rows: 10, Files: 1,
			Outcome: "committed", Offsets: fmt.Sprintf("events/0=%d ", 10*i+10)})
	}
	if err := c.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	commits := icebergio.Write(s, sink, offsets.Offsets{topic: {0: 0}}, beam.ParDo(s, stamp, teststream.Create(s, c)))
	passert.Equals(s, beam.ParDo(s, withoutSnapshotID, commits), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rowsOf(all...), icebergtest.Rows[Row](t, cat, ident), sortRows); diff != "" {
		t.Errorf("rows in the table (-want +got):\n%s", diff)
	}
}
