package parse

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// A batch large enough to be parsed on several goroutines gives the same
// rows, in the same order, as parsing it record by record, wherever the
// dead letters fall: at a chunk's start, at its end, in runs, or all of one
// chunk.
func TestParseBatchSplitKeepsOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	good := func(i int) []byte {
		return fmt.Appendf(nil, `{"source": "s%d", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`, i%7)
	}
	const n = 4*parallelMin + 77
	cases := map[string]func(i int) bool{ // which records are malformed
		"none":              func(int) bool { return false },
		"every 13th":        func(i int) bool { return i%13 == 0 },
		"chunk edges":       func(i int) bool { return i%(n/4) == 0 || i%(n/4) == n/4-1 },
		"all of chunk 2":    func(i int) bool { return i >= n/4 && i < n/2 },
		"all but the first": func(i int) bool { return i > 0 },
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			b := offsets.Batch{Topic: "t", Partition: 3, Start: 100, End: 100 + n}
			for i := range n {
				rec := offsets.Record{Offset: int64(100 + i), Timestamp: int64(i), Value: good(i)}
				switch {
				case bad(i) && i%2 == 0:
					rec.Value = []byte(`{"source": `)
				case bad(i):
					rec.Value, rec.Null = nil, true
				}
				b.Records = append(b.Records, rec)
			}
			eb, db := ParseBatch(b)
			rows := make([]tables.BronzeEvent, n)
			m, dead := parseRecords(b, 0, n, rows)
			if diff := cmp.Diff(rows[:m], eb.Rows); diff != "" {
				t.Errorf("events (-one goroutine +split):\n%s", diff)
			}
			if diff := cmp.Diff(dead, db.Rows); diff != "" {
				t.Errorf("dead letters (-one goroutine +split):\n%s", diff)
			}
			if len(eb.Rows)+len(db.Rows) != n {
				t.Errorf("%d events + %d dead letters, want %d records", len(eb.Rows), len(db.Rows), n)
			}
			for i := 1; i < len(eb.Rows); i++ {
				if eb.Rows[i].KafkaOffset <= eb.Rows[i-1].KafkaOffset {
					t.Fatalf("row %d: offset %d after %d", i, eb.Rows[i].KafkaOffset, eb.Rows[i-1].KafkaOffset)
				}
			}
		})
	}
}
