//go:build e2e

package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/tables"
)

// TestTrinoReadsTheLayers runs bronze, silver and gold on real Kafka, MinIO
// and PostgreSQL, then reads every table back through Trino's JDBC catalog
// and checks it against what was produced and what our own readers see. Its
// tables keep the names the dashboard reads (analytics.bronze_events, ...),
// so TestSuperset can draw them.
func TestTrinoReadsTheLayers(t *testing.T) {
	ctx := context.Background()
	l := newLake(t, "")
	var s sample
	produce(t, l.topic, 2000, 0, &s)
	l.runBronze()
	firstRows := queryCount(t, l.bronze)
	produce(t, l.topic, 1000, 1, &s)
	l.runBronze()
	l.runSilver()
	l.runGold()
	tr := newTrino(trinoURL, "iceberg", namespace)
	name := func(ident string) string { return strings.TrimPrefix(ident, namespace+".") }

	t.Run("counts", func(t *testing.T) {
		var bronzeAndDLQ int64
		for _, id := range l.tables() {
			got, err := tr.count(ctx, name(id))
			if err != nil {
				t.Fatal(err)
			}
			want := queryCount(t, id)
			if got != want || got == 0 {
				t.Errorf("%s: Trino counts %d rows, pipelines/query %d (want equal, non-zero)", id, got, want)
			}
			if id == l.bronze || id == l.dlq {
				bronzeAndDLQ += got
			}
		}
		if bronzeAndDLQ != int64(s.total()) {
			t.Errorf("bronze + dead letters = %d rows in Trino, want every record produced: %d", bronzeAndDLQ, s.total())
		}
	})

	t.Run("types", func(t *testing.T) {
		want := map[string]string{"source": "varchar", "title": "varchar", "timestamp": "timestamp(6) with time zone",
			"ingested_at": "timestamp(6) with time zone", "kafka_topic": "varchar", "kafka_partition": "integer",
			"kafka_offset": "bigint", "kafka_timestamp": "timestamp(6) with time zone", "extra": "varchar",
			"kafka_key": "varbinary", "kafka_headers": "array(row(key varchar, value varbinary))", "kafka_timestamp_type": "varchar"}
		r, err := tr.query(ctx, "SELECT * FROM "+name(l.bronze)+" LIMIT 1")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range r.Columns {
			got[c.Name] = c.Type
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("bronze's columns in Trino (-want +got):\n%s", d)
		}
	})

	t.Run("bronze row by row", func(t *testing.T) {
		r, err := tr.query(ctx, "SELECT * FROM "+name(l.bronze)+" ORDER BY kafka_partition, kafka_offset")
		if err != nil {
			t.Fatal(err)
		}
		var got []tables.BronzeEvent
		for _, m := range r.maps() {
			got = append(got, bronzeRow(m))
		}
		var want []tables.BronzeEvent
		if err := icebergio.ScanRows(ctx, catalogConfig(), l.bronze, &want); err != nil {
			t.Fatal(err)
		}
		sort.Slice(want, func(i, j int) bool {
			a, b := want[i], want[j]
			return a.KafkaPartition < b.KafkaPartition || a.KafkaPartition == b.KafkaPartition && a.KafkaOffset < b.KafkaOffset
		})
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("bronze through Trino differs from iceberg-go's scan (-iceberg-go +trino):\n%s", d)
		}
		// The event times are the produced ones, to the microsecond, in UTC.
		for _, e := range got {
			var ev event
			if err := json.Unmarshal(s.values[e.KafkaPartition][e.KafkaOffset], &ev); err != nil {
				t.Fatalf("partition %d offset %d: %v", e.KafkaPartition, e.KafkaOffset, err)
			}
			ts, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			if ts.UnixMicro() != e.Timestamp {
				t.Fatalf("partition %d offset %d: timestamp %v in Trino, produced %v", e.KafkaPartition, e.KafkaOffset,
					time.UnixMicro(e.Timestamp).UTC(), ts)
			}
		}
	})

	t.Run("dead letters byte for byte", func(t *testing.T) {
		r, err := tr.query(ctx, "SELECT * FROM "+name(l.dlq)+" ORDER BY kafka_partition, kafka_offset")
		if err != nil {
			t.Fatal(err)
		}
		var got []tables.DeadLetter
		for _, m := range r.maps() {
			got = append(got, deadLetterRow(m))
		}
		var want []tables.DeadLetter
		if err := icebergio.ScanRows(ctx, catalogConfig(), l.dlq, &want); err != nil {
			t.Fatal(err)
		}
		sort.Slice(want, func(i, j int) bool {
			a, b := want[i], want[j]
			return a.KafkaPartition < b.KafkaPartition || a.KafkaPartition == b.KafkaPartition && a.KafkaOffset < b.KafkaOffset
		})
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("the dead letters through Trino differ from iceberg-go's scan (-iceberg-go +trino):\n%s", d)
		}
		// Two rounds of the bad values and a tombstone each.
		if len(got) != 2*(len(badValues)+1) {
			t.Errorf("%d dead letters, want %d", len(got), 2*(len(badValues)+1))
		}
		invalid := 0
		for _, d := range got {
			produced := s.values[d.KafkaPartition][d.KafkaOffset]
			if !bytes.Equal(d.Payload, produced) || (d.Payload == nil) != (produced == nil) {
				t.Errorf("partition %d offset %d: payload %q through Trino, produced %q", d.KafkaPartition, d.KafkaOffset, d.Payload, produced)
			}
			if bytes.HasPrefix(d.Payload, []byte("\xff\xfe")) {
				invalid++
			}
		}
		if invalid != 2 {
			t.Errorf("%d dead letters start with the invalid UTF-8 bytes ff fe, want 2", invalid)
		}
	})

	t.Run("offsets in $snapshots", func(t *testing.T) {
		r, err := tr.query(ctx, `SELECT snapshot_id, element_at(summary, 'haade.kafka.offsets') AS offsets, element_at(summary, 'haade.pipeline') AS pipeline
			FROM "`+name(l.bronze)+`$snapshots" ORDER BY committed_at`)
		if err != nil {
			t.Fatal(err)
		}
		var last string
		for _, m := range r.maps() {
			if o := m.str("offsets"); o != nil {
				if p := m.str("pipeline"); p == nil || *p != "analytics-bronze-"+l.id {
					t.Errorf("snapshot %v: haade.pipeline %v, want analytics-bronze-%s", m["snapshot_id"], p, l.id)
				}
				last = *o
			}
		}
		var got map[string]map[string]int64
		if err := json.Unmarshal([]byte(last), &got); err != nil {
			t.Fatalf("haade.kafka.offsets %q: %v", last, err)
		}
		want := map[string]map[string]int64{l.topic: {}}
		for p, vs := range s.values {
			want[l.topic][strconv.Itoa(p)] = int64(len(vs))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("the newest haade.kafka.offsets in Trino's $snapshots (-end offsets +summary):\n%s", d)
		}
	})

	t.Run("time travel", func(t *testing.T) {
		first, err := tr.scalar(ctx, `SELECT snapshot_id FROM "`+name(l.bronze)+`$snapshots" ORDER BY committed_at LIMIT 1`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.count(ctx, name(l.bronze)+" FOR VERSION AS OF "+first)
		if err != nil {
			t.Fatal(err)
		}
		if got != firstRows {
			t.Errorf("bronze FOR VERSION AS OF %s: %d rows, want the %d of the first run", first, got, firstRows)
		}
		now, err := tr.count(ctx, name(l.bronze))
		if err != nil {
			t.Fatal(err)
		}
		if now <= got {
			t.Errorf("bronze has %d rows now, %d at the first snapshot: want more now", now, got)
		}
	})

	t.Run("partition pruning", func(t *testing.T) {
		// silver is partitioned by day(timestamp), and the events span three days.
		day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
		pred := fmt.Sprintf("timestamp >= TIMESTAMP '%s UTC' AND timestamp < TIMESTAMP '%s UTC'",
			day.Format("2006-01-02 15:04:05"), day.AddDate(0, 0, 1).Format("2006-01-02 15:04:05"))
		inDay, err := tr.count(ctx, name(l.silver)+" WHERE "+pred)
		if err != nil {
			t.Fatal(err)
		}
		total, err := tr.count(ctx, name(l.silver))
		if err != nil {
			t.Fatal(err)
		}
		if inDay == 0 || inDay >= total {
			t.Fatalf("%d of %d silver rows on %s: want some, not all", inDay, total, day.Format("2006-01-02"))
		}
		plan, err := tr.scalar(ctx, "EXPLAIN ANALYZE SELECT count(*) FROM "+name(l.silver)+" WHERE "+pred)
		if err != nil {
			t.Fatal(err)
		}
		input := scanInputRows(plan)
		if input < 0 {
			t.Fatalf("no table scan's Input rows in EXPLAIN ANALYZE:\n%s", plan)
		}
		if input != inDay {
			t.Errorf("the scan read %d rows, want only the %d of the one day's partition (of %d):\n%s", input, inDay, total, plan)
		}
		t.Logf("EXPLAIN ANALYZE: the scan read %d of %d rows", input, total)
	})

	t.Run("gold against silver", func(t *testing.T) {
		// gold_source_daily is silver counted by source and day: Trino recomputes it.
		r, err := tr.query(ctx, `SELECT d.day, d.source, d.events, s.n FROM `+name(l.daily)+` d FULL JOIN
			(SELECT CAST(timestamp AS date) AS day, source, count(*) AS n FROM `+name(l.silver)+` GROUP BY 1, 2) s
			ON d.day = s.day AND d.source = s.source WHERE d.events IS NULL OR s.n IS NULL OR d.events <> s.n`)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) > 0 {
			t.Errorf("gold_source_daily and silver disagree on %d (day, source) pairs: %v", len(r.Rows), r.Rows)
		}
	})
}

var inputRows = regexp.MustCompile(`Input: ([0-9,]+) rows`)

// scanInputRows finds the input rows of the plan's table scan: the Input of
// the first ScanFilter or TableScan fragment in EXPLAIN ANALYZE's text, or
// -1 if there is none.
func scanInputRows(plan string) int64 {
	lines := strings.Split(plan, "\n")
	for i, ln := range lines {
		if !strings.Contains(ln, "TableScan[") && !strings.Contains(ln, "ScanFilter") && !strings.Contains(ln, "ScanFilterProject[") {
			continue
		}
		for _, next := range lines[i:min(i+8, len(lines))] {
			if m := inputRows.FindStringSubmatch(next); m != nil {
				n, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
				return n
			}
		}
	}
	return -1
}
