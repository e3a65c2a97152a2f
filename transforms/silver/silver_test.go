package silver

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

func init() {
	register.Function1x1(countRows)
	register.Function1x1(countRejects)
}

func str(s string) *string { return &s }

var base = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC).UnixMicro()

func bronze(src, title *string, ts int64, offset int64) tables.BronzeEvent {
	return tables.BronzeEvent{Source: src, Title: title, Timestamp: ts, IngestedAt: base + offset, KafkaTopic: "t",
		KafkaPartition: 0, KafkaOffset: offset}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name   string
		in     tables.BronzeEvent
		want   tables.SilverEvent
		reason string
	}{
		{"clean", bronze(str("  Central  Bank "), str(" Rate \t cut  "), base, 1),
			tables.SilverEvent{Source: "central-bank", Title: "Rate cut", Timestamp: base, IngestedAt: base + 1, KafkaOffset: 1, BronzeSnapshotID: 7}, ""},
		{"no source", bronze(nil, str("x"), base, 2), tables.SilverEvent{}, "missing source"},
		{"blank source", bronze(str("   "), str("x"), base, 3), tables.SilverEvent{}, "missing source"},
		{"no title", bronze(str("news"), nil, base, 4), tables.SilverEvent{}, "missing title"},
		{"ancient", bronze(str("news"), str("x"), 0, 5), tables.SilverEvent{}, "timestamp before 2000-01-01"},
		{"future", bronze(str("news"), str("x"), base+int64(48*time.Hour/time.Microsecond), 6), tables.SilverEvent{}, "timestamp more than a day after ingestion"},
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

func snapshot(seq int64, rows []tables.BronzeEvent) tables.BronzeSnapshot {
	return tables.BronzeSnapshot{Range: offsets.Range{Topic: "iceberg:b", Start: seq, End: seq + 1}, SnapshotID: 100 + seq, Rows: rows}
}

func countRows(b Batch) int          { return len(b.Rows) }
func countRejects(b RejectBatch) int { return len(b.Rows) }

func TestFromBronze(t *testing.T) {
	s1 := snapshot(1, []tables.BronzeEvent{
		bronze(str("news"), str("A"), base, 2),
		bronze(str(" NEWS "), str("A  "), base, 1), // bronze order puts it first
		bronze(nil, str("B"), base, 3),             // a reject
		bronze(str("ft"), str("C"), base+1, 4),
	})
	s2 := snapshot(2, []tables.BronzeEvent{bronze(str("ft"), str("D"), base, 6)})
	p, s := beam.NewPipelineWithRoot()
	events, rejects := FromBronze(s, beam.CreateList(s, []tables.BronzeSnapshot{s1, s2}))
	passert.Equals(s, events,
		Batch{Source: s1.Range, Rows: []tables.SilverEvent{
			{Source: "news", Title: "A", Timestamp: base, IngestedAt: base + 1, KafkaOffset: 1, BronzeSnapshotID: 101},
			{Source: "news", Title: "A", Timestamp: base, IngestedAt: base + 2, KafkaOffset: 2, BronzeSnapshotID: 101},
			{Source: "ft", Title: "C", Timestamp: base + 1, IngestedAt: base + 4, KafkaOffset: 4, BronzeSnapshotID: 101}}},
		Batch{Source: s2.Range, Rows: []tables.SilverEvent{
			{Source: "ft", Title: "D", Timestamp: base, IngestedAt: base + 6, KafkaOffset: 6, BronzeSnapshotID: 102}}})
	passert.Sum(s, beam.ParDo(s, countRejects, rejects), "rejects, one batch per snapshot", 2, 1)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func TestDeduperSeedAndHorizon(t *testing.T) {
	d := NewDeduper(time.Hour)
	day := base / DayMicros
	if d.Seeded(day) {
		t.Fatal("a new Deduper has a seeded day")
	}
	d.Seed(day, []tables.SilverEvent{{Source: "news", Title: "A", Timestamp: base, IngestedAt: base}})
	if !d.Seeded(day) {
		t.Fatal("Seed did not mark the day")
	}
	cases := []struct {
		row  tables.SilverEvent
		keep bool
	}{
		{tables.SilverEvent{Source: "news", Title: "A", Timestamp: base, IngestedAt: base + 1}, false},                                  // in the table
		{tables.SilverEvent{Source: "news", Title: "B", Timestamp: base, IngestedAt: base + 2}, true},                                   // new
		{tables.SilverEvent{Source: "news", Title: "B", Timestamp: base, IngestedAt: base + 3}, false},                                  // this run's
		{tables.SilverEvent{Source: "news", Title: "A", Timestamp: base, IngestedAt: base + int64(2*time.Hour/time.Microsecond)}, true}, // past the horizon
	}
	for i, tc := range cases {
		if got := d.Keep(tc.row); got != tc.keep {
			t.Errorf("row %d (%s/%s at +%dus): Keep = %v, want %v", i, tc.row.Source, tc.row.Title, tc.row.IngestedAt-base, got, tc.keep)
		}
	}
}

func TestDedupForgetsKeysPastTheHorizon(t *testing.T) {
	d := NewDeduper(6 * time.Hour)
	const perHour = 100
	hour := int64(time.Hour / time.Microsecond)
	var kept, most int
	for h := int64(0); h < 240; h++ {
		var rows []tables.SilverEvent
		for i := range perHour {
			at := base + h*hour + int64(i)
			title := fmt.Sprintf("h%d-%d", h, i)
			rows = append(rows,
				tables.SilverEvent{Source: "news", Title: title, Timestamp: base, IngestedAt: at},
				tables.SilverEvent{Source: "news", Title: title, Timestamp: base, IngestedAt: at + 2*hour}, // within: dropped
			)
			if h >= 10 { // the same key as ten hours ago: past the horizon, kept
				rows = append(rows, tables.SilverEvent{Source: "news", Title: fmt.Sprintf("h%d-%d", h-10, i), Timestamp: base, IngestedAt: at})
			}
		}
		for _, r := range rows {
			if d.Keep(r) {
				kept++
			}
		}
		d.Evict()
		most = max(most, d.Held())
	}
	if want := 240*perHour + 230*perHour; kept != want {
		t.Errorf("kept %d rows, want %d: every first row and every repeat past the horizon", kept, want)
	}
	if limit := 2 * perHour * (6 + 1 + 2 + 2); most > limit {
		t.Errorf("dedup held up to %d keys, want at most %d: keys past the horizon are not forgotten", most, limit)
	}
	if most < 2*perHour*6 {
		t.Errorf("dedup held at most %d keys, fewer than one horizon's worth (%d): it forgets too soon", most, 2*perHour*6)
	}
}
