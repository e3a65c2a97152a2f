//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keyedRecord is what Kafka acknowledged of one keyed record.
type keyedRecord struct {
	Key    string // "" for a record without a key
	Title  string // "" for a delete
	Delete bool
	P      int32
	O      int64
}

// startKeyedProducer produces updates of keys at a steady rate: every 9th
// a tombstone, every 13th an event with "op": "delete", every 500th a
// record without a key; Kafka's default partitioner keeps each key in one
// partition. It appends what Kafka acknowledged to acked.
func startKeyedProducer(t *testing.T, topic string, keys, rate int, acked *[]keyedRecord) *ackedProducer {
	cl := mustClient(t, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	return startAcked(cl, rate, func(n int) (*kgo.Record, func(*kgo.Record)) {
		kr := keyedRecord{Key: fmt.Sprintf("debtor-%d", rand.N(keys)), Title: fmt.Sprintf("status %d", n)}
		rec := &kgo.Record{Key: []byte(kr.Key), Value: fmt.Appendf(nil, `{"source":"ledger","title":%q,"timestamp":"2026-05-19T10:00:00Z"}`, kr.Title)}
		switch {
		case n%500 == 499:
			kr.Key, rec.Key = "", nil
		case n%9 == 0:
			kr.Title, kr.Delete, rec.Value = "", true, nil
		case n%13 == 0:
			kr.Title, kr.Delete = "", true
			rec.Value = []byte(`{"source":"ledger","title":"closed","timestamp":"2026-05-19T10:00:00Z","op":"delete"}`)
		}
		return rec, func(r *kgo.Record) {
			kr.P, kr.O = r.Partition, r.Offset
			*acked = append(*acked, kr)
		}
	})
}

// liveRow is a key's row as every reader must see it.
type liveRow struct {
	Title string
	P     int32
	O     int64
}

// latestOf returns each live key's latest record (the highest offset of its
// partition), and how many records had no key.
func latestOf(t *testing.T, recs []keyedRecord) (map[string]liveRow, int) {
	last := map[string]keyedRecord{}
	partOf := map[string]int32{}
	noKey := 0
	for _, r := range recs {
		if r.Key == "" {
			noKey++
			continue
		}
		if p, ok := partOf[r.Key]; ok && p != r.P {
			t.Fatalf("key %s in partitions %d and %d", r.Key, p, r.P)
		}
		partOf[r.Key] = r.P
		if l, ok := last[r.Key]; !ok || r.O > l.O {
			last[r.Key] = r
		}
	}
	out := map[string]liveRow{}
	for k, r := range last {
		if !r.Delete {
			out[k] = liveRow{Title: r.Title, P: r.P, O: r.O}
		}
	}
	return out, noKey
}

// --upsert on real Kafka, MinIO and PostgreSQL: keyed updates stream in
// while bronze is killed with SIGKILL twice and started again; after a
// clean stop and a bounded run, the table holds exactly the latest event of
// every live key, as icebergio.ScanRows, Spark and pyiceberg read it (with
// its position deletes applied), and the records without a key are dead
// letters.
func TestUpsertCrashes(t *testing.T) {
	e := newEnv(t, "upsert", 4)
	var recs []keyedRecord
	kp := startKeyedProducer(t, e.topic, 2000, 1000, &recs)
	p := e.startBronze("--upsert")
	for i := range 2 {
		e.waitCommits(p, 0, 2*time.Minute)
		time.Sleep(rand.N(3 * time.Second))
		p.kill9()
		t.Logf("kill -9 #%d (that run made %d commits)", i+1, countLines(p.log, `msg=committed`))
		p = e.startBronze("--upsert")
	}
	e.waitCommits(p, 0, 2*time.Minute)
	kp.finish(t)
	e.terminate(p, 2*time.Minute)
	e.runBounded(3*time.Minute, "--upsert")
	want, noKey := latestOf(t, recs)

	var rows []tables.BronzeEvent
	if err := icebergio.ScanRows(t.Context(), e.catalog(), e.table, &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]liveRow{}
	for _, r := range rows {
		k := string(r.KafkaKey)
		if _, dup := got[k]; dup {
			t.Errorf("key %s is live twice", k)
		}
		got[k] = liveRow{Title: *r.Title, P: r.KafkaPartition, O: r.KafkaOffset}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ScanRows: live rows (-want +got):\n%s", diff)
	}
	var dls []tables.DeadLetter
	if err := icebergio.ScanRows(t.Context(), e.catalog(), e.dlq, &dls); err != nil {
		t.Fatal(err)
	}
	for _, dl := range dls {
		if reason, _ := parse.SplitError(dl.Error); reason != parse.NoKey {
			t.Errorf("dead letter %d/%d: %s, want %s", dl.KafkaPartition, dl.KafkaOffset, dl.Error, parse.NoKey)
		}
	}
	if len(dls) != noKey {
		t.Errorf("%d dead letters, %d records without a key", len(dls), noKey)
	}
	t.Logf("%d records over %d keys: %d live, %d without a key", len(recs), 2000, len(want), noKey)

	// Spark and pyiceberg, with the deletes applied: the same rows, no more.
	var keys [][2]int64
	for _, r := range want {
		keys = append(keys, [2]int64{int64(r.P), r.O})
	}
	kb, _ := json.Marshal(map[string][][2]int64{e.table: keys})
	res := e.readEngines("--table", e.table, "--keys", e.writeFile("keys.json", kb))
	for _, engine := range []string{"spark", "pyiceberg"} {
		out := res[engine].Tables[e.table]
		if out.Count != int64(len(want)) {
			t.Errorf("%s counts %d rows, want %d live keys", engine, out.Count, len(want))
		}
		seen := map[string]liveRow{}
		for _, r := range out.Rows {
			kb, err := base64.StdEncoding.DecodeString(r["kafka_key"].(string))
			if err != nil {
				t.Fatalf("%s: kafka_key %v: %v", engine, r["kafka_key"], err)
			}
			p, _ := r["kafka_partition"].(json.Number).Int64()
			o, _ := r["kafka_offset"].(json.Number).Int64()
			seen[string(kb)] = liveRow{Title: r["title"].(string), P: int32(p), O: o}
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("%s: live rows (-want +got):\n%s", engine, diff)
		}
	}
}
