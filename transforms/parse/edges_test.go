package parse

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
)

func i64p(v int64) *int64 { return &v }

// Timestamps at the edges: Kafka record timestamps of zero and before 1970
// are times (only -1 means "none"), a leap second is stored as the last
// microsecond of its minute, and years 0000 and 10000 (once in UTC) are
// dead letters that say why. Nothing is lost.
func TestTimestampEdges(t *testing.T) {
	ev := func(ts string) []byte { return []byte(`{"source": "s", "title": "t", "timestamp": "` + ts + `"}`) }
	b := offsets.Batch{Topic: "t", Partition: 0, Start: 0, End: 8, Records: []offsets.Record{
		{Offset: 0, Timestamp: -1, Value: ev("2026-05-19T10:00:00Z")},
		{Offset: 1, Timestamp: 0, Value: ev("2026-05-19T10:00:00Z")},
		{Offset: 2, Timestamp: -86_400_000, Value: ev("2026-05-19T10:00:00Z")},
		{Offset: 3, Timestamp: -2, Value: ev("2016-12-31T23:59:60Z")},
		{Offset: 4, Timestamp: 1, Value: ev("0001-01-01T00:00:00Z")},
		{Offset: 5, Timestamp: 1, Value: ev("9999-12-31T23:59:59.999999Z")},
		{Offset: 6, Timestamp: -5, Value: ev("0000-01-01T00:00:00+23:59")},
		{Offset: 7, Timestamp: 1, Value: ev("9999-12-31T23:59:59-23:59")},
	}}
	eb, db := ParseBatch(b)
	micros := func(y int, mo time.Month, d, h, mi, s, us int) int64 {
		return time.Date(y, mo, d, h, mi, s, us*1000, time.UTC).UnixMicro()
	}
	may := micros(2026, 5, 19, 10, 0, 0, 0)
	type row struct {
		Offset    int64
		Timestamp int64
		KafkaTS   *int64
	}
	var got []row
	for _, e := range eb.Rows {
		got = append(got, row{e.KafkaOffset, e.Timestamp, e.KafkaTimestamp})
	}
	want := []row{
		{0, may, nil},
		{1, may, i64p(0)},
		{2, may, i64p(-86_400_000_000)},
		{3, micros(2016, 12, 31, 23, 59, 59, 999_999), i64p(-2000)},
		{4, micros(1, 1, 1, 0, 0, 0, 0), i64p(1000)},
		{5, micros(9999, 12, 31, 23, 59, 59, 999_999), i64p(1000)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bronze rows (-want +got):\n%s", diff)
	}
	if len(db.Rows) != 2 {
		t.Fatalf("%d dead letters, want 2 (years 0000 and 10000): %+v", len(db.Rows), db.Rows)
	}
	for i, d := range db.Rows {
		if !strings.HasPrefix(d.Error, "bad_timestamp:") || !strings.Contains(d.Error, "outside the years 0001-9999 in UTC") {
			t.Errorf("dead letter %d: reason %q, want bad_timestamp naming the years", i, d.Error)
		}
		if string(d.Payload) != string(b.Records[6+i].Value) {
			t.Errorf("dead letter %d: payload %q, want the record's bytes", i, d.Payload)
		}
	}
	if diff := cmp.Diff(i64p(-5000), db.Rows[0].KafkaTimestamp); diff != "" {
		t.Errorf("dead letter kafka_timestamp (-want +got):\n%s", diff)
	}
}
