package silver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	icerows "github.com/haade/haade/io/icebergio/rows"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/transforms/parse"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

func init() {
	register.Function1x1(countRows)
	register.Function1x1(countRejects)
}

func str(s string) *string { return &s }

var base = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC).UnixMicro()

func bronze(src, title *string, ts int64, offset int64) parse.Event {
	return parse.Event{Source: src, Title: title, Timestamp: ts, IngestedAt: base + offset, KafkaTopic: "t",
		KafkaPartition: 0, KafkaOffset: offset}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name   string
		in     parse.Event
		want   Event
		reason string
	}{
		{"clean", bronze(str("  Central  Bank "), str(" Rate \t cut  "), base, 1),
			Event{Source: "central-bank", Title: "Rate cut", Timestamp: base, IngestedAt: base + 1, KafkaOffset: 1, BronzeSnapshotID: 7}, ""},
		{"no source", bronze(nil, str("x"), base, 2), Event{}, "missing source"},
		{"blank source", bronze(str("   "), str("x"), base, 3), Event{}, "missing source"},
		{"no title", bronze(str("news"), nil, base, 4), Event{}, "missing title"},
		{"ancient", bronze(str("news"), str("x"), 0, 5), Event{}, "timestamp before 2000-01-01"},
		{"future", bronze(str("news"), str("x"), base+int64(48*time.Hour/time.Microsecond), 6), Event{}, "timestamp more than a day after ingestion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := Normalize(tc.in, 7)
			if reason != tc.reason {
				t.Fatalf("reason %q, want %q", reason, tc.reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func snapshot(t *testing.T, seq int64, rows []parse.Event) snapshots.SnapshotRows {
	t.Helper()
	b, err := icerows.Encode(rows)
	if err != nil {
		t.Fatal(err)
	}
	return snapshots.SnapshotRows{Range: icebergio.Range{Topic: "iceberg:b", Start: seq, End: seq + 1}, SnapshotID: 100 + seq, Rows: int64(len(rows)), IPC: b}
}

func countRows(b Batch) int          { return len(b.Rows) }
func countRejects(b RejectBatch) int { return len(b.Rows) }

// silverTable makes an empty lakehouse.silver in a temporary SQLite
// catalog and file warehouse.
func silverTable(t *testing.T) icebergio.CatalogConfig {
	t.Helper()
	dir := t.TempDir()
	cat := icebergio.CatalogConfig{URI: filepath.Join(dir, "c.db"), Warehouse: filepath.Join(dir, "w")}
	if _, err := icebergio.Open(context.Background(), cat, icebergio.Table{Ident: "lakehouse.silver", Row: Event{},
		Partition: []icebergio.PartitionField{{Column: "timestamp", Transform: "day"}}}, "test"); err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestFromBronzeAndDedup(t *testing.T) {
	cat := silverTable(t)
	s1 := snapshot(t, 1, []parse.Event{
		bronze(str("news"), str("A"), base, 1),
		bronze(str(" NEWS "), str("A  "), base, 2), // a duplicate of the first once cleaned
		bronze(nil, str("B"), base, 3),             // a reject
		bronze(str("ft"), str("C"), base+1, 4),
	})
	s2 := snapshot(t, 2, []parse.Event{
		bronze(str("news"), str("A"), base, 5), // a duplicate from a later snapshot
		bronze(str("ft"), str("D"), base, 6),
	})
	p, s := beam.NewPipelineWithRoot()
	snaps := beam.CreateList(s, []snapshots.SnapshotRows{s1, s2})
	events, rejects := FromBronze(s, snaps)
	passert.Sum(s, beam.ParDo(s, countRows, events), "normalised rows", 2, 5)
	passert.Sum(s, beam.ParDo(s, countRejects, rejects), "rejects", 2, 1)
	deduped := Dedup(s, events, DedupOptions{Catalog: cat, Table: "lakehouse.silver", Horizon: time.Hour})
	passert.Sum(s, beam.ParDo(s, countRows, deduped), "unique rows", 2, 3)
	passert.Count(s, deduped, "one batch per snapshot", 2)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestDedupForgetsKeysPastTheHorizon feeds a streaming dedup ten days of
// rows, each key repeated within the horizon and again after it: the
// repeats within are dropped, those after are kept, and the keys held stay
// those of about the last horizon, not every key since the start.
func TestDedupForgetsKeysPastTheHorizon(t *testing.T) {
	ctx := context.Background()
	cat := silverTable(t)
	f := &dedupFn{Catalog: cat, Table: "lakehouse.silver", Horizon: 6 * time.Hour}
	f.Setup()
	const perHour = 100
	hour := int64(time.Hour / time.Microsecond)
	var kept, most int
	for h := int64(0); h < 240; h++ {
		var rows []Event
		for i := range perHour {
			at := base + h*hour + int64(i)
			title := fmt.Sprintf("h%d-%d", h, i)
			rows = append(rows,
				Event{Source: "news", Title: title, Timestamp: base, IngestedAt: at},
				Event{Source: "news", Title: title, Timestamp: base, IngestedAt: at + 2*hour}, // within: dropped
			)
			if h >= 10 { // the same key as ten hours ago: past the horizon, kept
				rows = append(rows, Event{Source: "news", Title: fmt.Sprintf("h%d-%d", h-10, i), Timestamp: base, IngestedAt: at})
			}
		}
		if err := f.ProcessElement(ctx, Batch{Rows: rows}, func(b Batch) { kept += len(b.Rows) }); err != nil {
			t.Fatal(err)
		}
		most = max(most, len(f.seen))
	}
	if want := 240*perHour + 230*perHour; kept != want {
		t.Errorf("kept %d rows, want %d: every first row and every repeat past the horizon", kept, want)
	}
	// Two keys an hour (new and repeated) over horizon + slack + a quarter
	// horizon at most, plus the hour being processed.
	if limit := 2 * perHour * (6 + 1 + 2 + 2); most > limit {
		t.Errorf("dedup held up to %d keys, want at most %d: keys past the horizon are not forgotten", most, limit)
	}
	if most < 2*perHour*6 {
		t.Errorf("dedup held at most %d keys, fewer than one horizon's worth (%d): it forgets too soon", most, 2*perHour*6)
	}
}
