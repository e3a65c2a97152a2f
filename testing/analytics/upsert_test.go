//go:build e2e

package analytics

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceKeyed sends n keyed updates over keys keys (every 9th a
// tombstone, every 13th an event with "op": "delete") and records each
// key's latest title in latest ("" when deleted). Kafka's default
// partitioner keeps a key in one partition, and one synchronous producer
// keeps each partition's order: the last record sent for a key is its
// highest offset.
func produceKeyed(t *testing.T, topic string, n, keys int, latest map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range n {
		key := fmt.Sprintf("debtor-%d", rand.N(keys))
		title := fmt.Sprintf("status %d %d", i, rand.N(1000))
		value := fmt.Appendf(nil, `{"source":"ledger","title":%q,"timestamp":"2026-05-19T10:00:00Z"}`, title)
		switch {
		case i%9 == 0:
			value, title = nil, ""
		case i%13 == 0:
			value, title = []byte(`{"source":"ledger","title":"closed","timestamp":"2026-05-19T10:00:00Z","op":"delete"}`), ""
		}
		latest[key] = title
		recs = append(recs, &kgo.Record{Key: []byte(key), Value: value})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// Trino reads an upsert table (bronze --upsert): the latest event of every
// live key, as iceberg-go reads it, and no delete file (the upserts are
// copy-on-write; with merge-on-read, iceberg-go's unsorted position deletes
// made Trino read replaced rows: docs/DESIGN.md, "Upserts"). Compaction
// (pipelines/maintain) leaves the same rows. The test logs Trino's read of
// the table before and after, and the files it holds.
func TestTrinoReadsAnUpsertTable(t *testing.T) {
	ctx := context.Background()
	l := newLake(t, "upsert")
	latest := map[string]string{}
	// Three runs: several data files, and deletes of rows in earlier ones.
	for range 3 {
		produceKeyed(t, l.topic, 3000, 400, latest)
		l.run(bronzeBin, 5*time.Minute, l.bronzeArgs("--bounded", "--upsert")...)
	}
	want := map[string]string{}
	for k, v := range latest {
		if v != "" {
			want[k] = v
		}
	}
	tr := newTrino(trinoURL, "iceberg", namespace)
	name := strings.TrimPrefix(l.bronze, namespace+".")
	if diff := cmp.Diff(want, trinoLive(t, tr, name, "before maintenance")); diff != "" {
		t.Fatalf("Trino before maintenance: key -> title (-want +got):\n%s", diff)
	}
	var rows []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, catalogConfig(), l.bronze, &rows); err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{}
	for _, r := range rows {
		ours[string(r.KafkaKey)] = *r.Title
	}
	if diff := cmp.Diff(want, ours); diff != "" {
		t.Fatalf("iceberg-go: key -> title (-want +got):\n%s", diff)
	}

	l.run(maintainBin, 5*time.Minute, append([]string{"--tables=" + l.bronze, "--actions=compact", "--min-input-files=2"}, catalogFlags()...)...)
	if diff := cmp.Diff(want, trinoLive(t, tr, name, "after compaction")); diff != "" {
		t.Fatalf("Trino after compaction: key -> title (-want +got):\n%s", diff)
	}
	deletes, err := tr.query(ctx, `SELECT count(*) FROM "`+name+`$files" WHERE content <> 0`)
	if err != nil {
		t.Fatal(err)
	}
	if n := fmt.Sprint(deletes.Rows[0][0]); n != "0" {
		t.Errorf("the table holds %s delete files, want none (copy-on-write)", n)
	}
}
