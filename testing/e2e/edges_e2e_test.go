//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timestamps at the edges, through real Kafka, MinIO and PostgreSQL, read
// back by pyiceberg into Python datetimes: a leap second is stored as the
// minute's last microsecond, years 0001 and 9999 are stored, years 0000 and
// 10000 in UTC are dead letters that say why (pyarrow cannot read them:
// storing them made the whole table unreadable), and Kafka record
// timestamps of zero and before 1970 are kept; only -1 means none.
func TestTimestampEdgesReadByPyiceberg(t *testing.T) {
	e := newEnv(t, "edges", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(e.topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ev := func(ts string) []byte { return []byte(`{"source": "edges", "title": "t", "timestamp": "` + ts + `"}`) }
	recs := []struct {
		kafkaMs int64
		value   []byte
	}{
		{0, ev("2016-12-31T23:59:60Z")},
		{-86_400_000, ev("0001-01-01T00:00:00Z")},
		{1, ev("9999-12-31T23:59:59.999999Z")},
		{1_000, ev("0000-01-01T00:00:00+23:59")},
		{1_000, ev("9999-12-31T23:59:59-23:59")},
		{1_779_184_800_000, ev("2026-05-19T10:00:00+02:00")},
	}
	for _, r := range recs {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: r.value, Timestamp: time.UnixMilli(r.kafkaMs)}).FirstErr(); err != nil {
			t.Fatalf("produce with Kafka timestamp %d: %v", r.kafkaMs, err)
		}
	}
	e.runBounded(3 * time.Minute)

	cmd := exec.Command("bash", filepath.Join(repoRoot, "testing/services/python.sh"), "python",
		filepath.Join(repoRoot, "testing/e2e/py/read_edges.py"), e.table, e.dlq)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyiceberg could not read the tables: %v\n%s", err, lastLines(stderr.String(), 30))
	}
	type row struct {
		Offset         int64   `json:"offset"`
		Timestamp      string  `json:"timestamp"`
		KafkaTimestamp *string `json:"kafka_timestamp"`
	}
	type dead struct {
		Offset         int64   `json:"offset"`
		Error          string  `json:"error"`
		KafkaTimestamp *string `json:"kafka_timestamp"`
	}
	var got struct {
		Rows []row  `json:"rows"`
		Dead []dead `json:"dead"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read_edges.py: %v\n%s", err, out)
	}
	s := func(v string) *string { return &v }
	wantRows := []row{
		{0, "2016-12-31T23:59:59.999999+00:00", s("1970-01-01T00:00:00+00:00")},
		{1, "0001-01-01T00:00:00+00:00", s("1969-12-31T00:00:00+00:00")},
		{2, "9999-12-31T23:59:59.999999+00:00", s("1970-01-01T00:00:00.001000+00:00")},
		{5, "2026-05-19T08:00:00+00:00", s("2026-05-19T10:00:00+00:00")},
	}
	if diff := cmp.Diff(wantRows, got.Rows); diff != "" {
		t.Errorf("bronze rows as pyiceberg reads them (-want +got):\n%s", diff)
	}
	if len(got.Dead) != 2 || got.Dead[0].Offset != 3 || got.Dead[1].Offset != 4 {
		t.Fatalf("dead letters %+v, want offsets 3 and 4 (years 0000 and 10000)", got.Dead)
	}
	for _, d := range got.Dead {
		if !strings.HasPrefix(d.Error, "bad_timestamp:") || !strings.Contains(d.Error, "outside the years 0001-9999 in UTC") {
			t.Errorf("dead letter %d: reason %q, want bad_timestamp naming the years", d.Offset, d.Error)
		}
	}
}
