//go:build e2e

package analytics

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/sparkpy"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/tables"
)

// TestUpsertAtScale is the upsert table at the scale, on real Kafka,
// MinIO and PostgreSQL: 1,000,000 keyed updates over 100,000 keys
// (produceKeyed: every 9th a tombstone, every 13th an "op": "delete"),
// half of them streamed into bronze --upsert as they are produced; it is
// killed with SIGKILL right after a commit, the other half is produced, and
// a bounded run goes to the end (it replays what the killed run read but
// did not commit). The table must then hold
// exactly the latest event of every live key, one row each, as iceberg-go,
// Trino, Spark and pyiceberg all read it; and the same after compaction
// (pipelines/maintain). It logs the bounded run's time and Trino's reads
// of the table before and after compaction.
//
// HAADE_UPSERT_EVENTS and HAADE_UPSERT_KEYS change the sizes.
func TestUpsertAtScale(t *testing.T) {
	events, keys := envInt(t, "HAADE_UPSERT_EVENTS", 1_000_000), envInt(t, "HAADE_UPSERT_KEYS", 100_000)
	ctx := context.Background()
	l := newLake(t, "upsertscale")
	latest := map[string]string{}

	// 1. A streaming bronze while the first half is produced, in five chunks;
	// killed with SIGKILL right after a commit that follows the fifth, so the
	// next window's reads are lost. Then the second half, and a bounded run to
	// the end, which replays what the killed run read and did not commit.
	br := l.startBronze("--upsert")
	const chunks = 10
	t0 := time.Now()
	for c := range chunks / 2 {
		produceKeyed(t, l.topic, events/chunks, keys, latest)
		if c == chunks/2-1 {
			after := br.commits()
			wait.For(t, 10*time.Minute, func() error {
				br.exited()
				if n := br.commits(); n <= after {
					return fmt.Errorf("%d commits, waiting for one after the %d before the fifth chunk", n, after)
				}
				return nil
			})
		}
	}
	br.kill()
	t.Logf("bronze --upsert killed with SIGKILL after %d commits, %v after its start", br.commits(), time.Since(t0).Round(100*time.Millisecond))
	for range chunks / 2 {
		produceKeyed(t, l.topic, events/chunks, keys, latest)
	}
	want := map[string]string{}
	for k, v := range latest {
		if v != "" {
			want[k] = v
		}
	}
	t.Logf("produced %d records over %d keys: %d live keys", events, keys, len(want))
	start := time.Now()
	out := l.run(bronzeBin, 20*time.Minute, l.bronzeArgs("--bounded", "--upsert")...)
	t.Logf("the bounded run (the replay and the second half) took %v", time.Since(start).Round(100*time.Millisecond))
	if !strings.Contains(out, "msg=committed") {
		t.Fatalf("the bounded run committed nothing:\n%s", cmdtest.Tail(out, 40))
	}

	// 2. iceberg-go, Trino, Spark and pyiceberg read the same live rows.
	var rows []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, catalogConfig(), l.bronze, &rows); err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{}
	var offsets [][2]int64
	for _, r := range rows {
		k := string(r.KafkaKey)
		if _, dup := ours[k]; dup {
			t.Errorf("iceberg-go: key %s is live twice", k)
		}
		ours[k] = *r.Title
		offsets = append(offsets, [2]int64{int64(r.KafkaPartition), r.KafkaOffset})
	}
	if diff := cmp.Diff(want, ours); diff != "" {
		t.Fatalf("iceberg-go: key -> title (-want +got):\n%s", diff)
	}
	tr := newTrino(trinoURL, "iceberg", namespace)
	name := strings.TrimPrefix(l.bronze, namespace+".")
	if diff := cmp.Diff(want, trinoLive(t, tr, name, "before compaction")); diff != "" {
		t.Fatalf("Trino before compaction: key -> title (-want +got):\n%s", diff)
	}
	kb, _ := json.Marshal(map[string][][2]int64{l.bronze: offsets})
	keysFile := filepath.Join(l.dir, "keys.json")
	if err := os.WriteFile(keysFile, kb, 0o644); err != nil {
		t.Fatal(err)
	}
	var engines map[string]struct {
		Tables map[string]struct {
			Count int64            `json:"count"`
			Rows  []map[string]any `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(sparkpy.Run(t, l.dir, "testing/e2e/py/read_tables.py", "--engines", "spark,pyiceberg",
		"--table", l.bronze, "--keys", keysFile), &engines); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"spark", "pyiceberg"} {
		out := engines[engine].Tables[l.bronze]
		if out.Count != int64(len(want)) {
			t.Errorf("%s counts %d rows, want %d live keys", engine, out.Count, len(want))
		}
		got := map[string]string{}
		for _, r := range out.Rows {
			k, err := base64.StdEncoding.DecodeString(r["kafka_key"].(string))
			if err != nil {
				t.Fatalf("%s: kafka_key %v: %v", engine, r["kafka_key"], err)
			}
			got[string(k)] = r["title"].(string)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: key -> title (-want +got):\n%s", engine, diff)
		}
	}

	// 3. Compaction leaves the same rows, in fewer files.
	l.run(maintainBin, 10*time.Minute, append([]string{"--tables=" + l.bronze, "--actions=compact", "--min-input-files=2"}, catalogFlags()...)...)
	if diff := cmp.Diff(want, trinoLive(t, tr, name, "after compaction")); diff != "" {
		t.Fatalf("Trino after compaction: key -> title (-want +got):\n%s", diff)
	}
}

// trinoLive reads an upsert table's live rows with Trino, key -> title,
// fails t on a key read twice, and logs how long the read took and the
// table's files.
func trinoLive(t *testing.T, tr *trino, name, when string) map[string]string {
	t.Helper()
	ctx := context.Background()
	// Three reads: the first also loads the table's metadata into Trino's
	// caches.
	var r *result
	var took []time.Duration
	for range 3 {
		start := time.Now()
		var err error
		if r, err = tr.query(ctx, "SELECT from_utf8(kafka_key), title FROM "+name); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start).Round(time.Millisecond))
	}
	got := map[string]string{}
	for _, row := range r.Rows {
		k := row[0].(string)
		if _, dup := got[k]; dup {
			t.Errorf("%s: Trino reads key %s twice", when, k)
		}
		got[k] = row[1].(string)
	}
	files, err := tr.query(ctx, `SELECT content, count(*), sum(record_count), sum(file_size_in_bytes) FROM "`+name+`$files" GROUP BY content ORDER BY content`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: Trino read %d live rows in %v (three reads); files (content, count, records, bytes): %v", when, len(got), took, files.Rows)
	return got
}

// envInt is the integer in the environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatal(errors.Join(fmt.Errorf("%s=%q: want a positive integer", name, s), err))
	}
	return n
}
