//go:build e2e

package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/tables"
)

// TestTrinoWritesWhileBronzeStreams: another engine writes into bronze while
// bronze streams into it. A Trino INSERT and a Trino optimize must neither
// lose nor duplicate a Kafka record, and a Trino DELETE (position deletes)
// must give the same count in Trino, pipelines/query and iceberg-go.
func TestTrinoWritesWhileBronzeStreams(t *testing.T) {
	ctx := context.Background()
	l := newLake(t, "writes")
	tr := newTrino(trinoURL, "iceberg", namespace)
	bronze := strings.TrimPrefix(l.bronze, namespace+".")
	dlq := strings.TrimPrefix(l.dlq, namespace+".")
	var s sample
	produce(t, l.topic, 1500, 0, &s)
	br := l.startBronze()
	waitRows(t, tr, bronze, dlq, s.total())

	// A row of our own, with a topic that no Kafka partition has.
	ins, err := tr.query(ctx, `INSERT INTO `+bronze+` (source, title, timestamp, ingested_at, kafka_topic, kafka_partition, kafka_offset)
		VALUES ('trino', 'inserted by trino', TIMESTAMP '2026-11-28 12:00:00.123456 UTC', current_timestamp(6), 'trino-insert', 0, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	if ins.UpdateCount == nil || *ins.UpdateCount != 1 {
		t.Fatalf("INSERT: update count %v, want 1", ins.UpdateCount)
	}
	produce(t, l.topic, 500, 1, &s)
	if _, err := tr.query(ctx, "ALTER TABLE "+bronze+" EXECUTE optimize"); err != nil {
		t.Fatal(err)
	}
	produce(t, l.topic, 500, 2, &s)
	waitRows(t, tr, bronze, dlq, s.total()+1)
	br.stop()
	// A bounded run afterwards finds nothing new to read.
	l.runBronze()
	checkExactlyOnce(t, tr, l, &s, 1)
	if n, err := tr.count(ctx, bronze+" WHERE kafka_topic = 'trino-insert'"); err != nil || n != 1 {
		t.Errorf("the row Trino inserted: %d copies (%v), want 1", n, err)
	}
	ops, _ := tr.query(ctx, `SELECT operation, count(*) FROM "`+bronze+`$snapshots" GROUP BY 1 ORDER BY 1`)
	if ops != nil {
		t.Logf("bronze's snapshots by operation: %v", ops.Rows)
	}

	// DELETE writes position deletes (format v2): every reader must apply them.
	del, err := tr.query(ctx, "DELETE FROM "+bronze+" WHERE kafka_partition = 1 AND kafka_offset % 3 = 0")
	if err != nil {
		t.Fatal(err)
	}
	deleted := int64(-1)
	if del.UpdateCount != nil {
		deleted = *del.UpdateCount
	}
	files, err := tr.query(ctx, `SELECT content, count(*) FROM "`+bronze+`$files" GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DELETE removed %d rows; bronze's files by content (0 data, 1 position deletes, 2 equality deletes): %v", deleted, files.Rows)
	viaTrino, err := tr.count(ctx, bronze)
	if err != nil {
		t.Fatal(err)
	}
	viaQuery := queryCount(t, l.bronze)
	var rows []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, catalogConfig(), l.bronze, &rows); err != nil {
		t.Fatal(err)
	}
	if viaTrino != viaQuery || viaTrino != int64(len(rows)) || deleted <= 0 {
		t.Errorf("after Trino's DELETE of %d rows: Trino counts %d, pipelines/query %d, iceberg-go's scan %d (want all equal)",
			deleted, viaTrino, viaQuery, len(rows))
	}
	// And bronze resumes after it without reading again.
	before := viaTrino
	l.runBronze()
	if n, _ := tr.count(ctx, bronze); n != before {
		t.Errorf("bronze after Trino's DELETE: %d rows, want still %d (nothing read twice)", n, before)
	}
}

// TestForeignMaintenance: another engine compacts every table of the three
// layers and expires their snapshots down to the current one; then more
// events arrive and bronze, silver and gold run again. Nothing may be read
// twice, nothing lost.
func TestForeignMaintenance(t *testing.T) {
	for _, engine := range []string{"trino", "spark"} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			l := newLake(t, "maint_"+engine)
			tr := newTrino(trinoURL, "iceberg", namespace)
			var s sample
			// Two rounds, so that every table has several files for the
			// compaction to rewrite, and its current snapshot becomes the
			// other engine's.
			for round := 0; round < 2; round++ {
				produce(t, l.topic, 800, round, &s)
				l.runBronze()
				l.runSilver()
				l.runGold()
			}
			checkExactlyOnce(t, tr, l, &s, 0)
			checkLayers(t, tr, l, &s)
			switch engine {
			case "trino":
				trinoMaintenance(t, tr, l.tables()...)
			case "spark":
				sparkMaintenance(t, l, l.tables()...)
			}
			for _, id := range l.tables() {
				n, err := tr.count(ctx, `"`+strings.TrimPrefix(id, namespace+".")+`$snapshots"`)
				if err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Errorf("%s: %d snapshots after %s's expire_snapshots, want 1 (the current one)", id, n, engine)
				}
				r, err := tr.query(ctx, `SELECT operation, element_at(summary, 'haade.pipeline') AS pipeline, element_at(summary, 'haade.kafka.offsets') AS offsets
					FROM "`+strings.TrimPrefix(id, namespace+".")+`$snapshots"`)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range r.maps() {
					t.Logf("%s: the one snapshot left: operation %v, haade.pipeline %v, haade.kafka.offsets %v", id, m["operation"], m["pipeline"], m["offsets"])
					// The hazard under test: the snapshots that carried the offsets are gone.
					if (id == l.bronze || id == l.silver) && m["pipeline"] != nil {
						t.Errorf("%s: the snapshot left is still the pipeline's own (%v): %s's compaction did not replace it, so the test proves nothing", id, m["operation"], engine)
					}
				}
			}
			produce(t, l.topic, 700, 2, &s)
			l.runBronze()
			l.runSilver()
			l.runGold()
			checkExactlyOnce(t, tr, l, &s, 0)
			checkLayers(t, tr, l, &s)
			freshRun(t, tr, l)
		})
	}
}

// trinoMaintenance runs Trino's optimize, then expire_snapshots with no
// retention at all (Trino refuses less than 7 days unless the session
// property allows it).
func trinoMaintenance(t *testing.T, tr *trino, idents ...string) {
	t.Helper()
	ctx := context.Background()
	tx := tr.with("iceberg.expire_snapshots_min_retention", "0s")
	for _, id := range idents {
		n := strings.TrimPrefix(id, namespace+".")
		start := time.Now()
		if _, err := tr.query(ctx, "ALTER TABLE "+n+" EXECUTE optimize"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.query(ctx, "ALTER TABLE "+n+" EXECUTE expire_snapshots(retention_threshold => '0s')"); err != nil {
			t.Fatal(err)
		}
		t.Logf("Trino: optimize and expire_snapshots of %s in %v", id, time.Since(start).Round(100*time.Millisecond))
	}
}

// sparkMaintenance runs Spark's rewrite_data_files and expire_snapshots
// (retain_last 1, older than now) in one Spark session.
func sparkMaintenance(t *testing.T, l *lake, idents ...string) {
	t.Helper()
	jars, err := exec.Command("bash", filepath.Join(repoRoot, "testing/services/python.sh"), "spark-jars").Output()
	if err != nil {
		t.Fatalf("python.sh spark-jars: %v", err)
	}
	args := append([]string{filepath.Join(repoRoot, "testing/services/python.sh"), "python",
		filepath.Join(repoRoot, "testing/analytics/py/spark_maintain.py"), "--jars", strings.TrimSpace(string(jars))}, idents...)
	cmd := exec.Command("bash", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("spark_maintain.py: %v\n%s", err, cmdtest.Tail(out.String(), 50))
	}
	var lines []string
	for _, ln := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(ln, "{") {
			lines = append(lines, "  "+ln)
		}
	}
	t.Logf("Spark: rewrite_data_files and expire_snapshots in %v:\n%s", time.Since(start).Round(100*time.Millisecond), strings.Join(lines, "\n"))
}

// checkExactlyOnce: every Kafka record of the test's topic is in exactly one
// of bronze and its dead letters, once; extra is how many rows other
// engines added to bronze.
func checkExactlyOnce(t *testing.T, tr *trino, l *lake, s *sample, extra int) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{l.bronze, l.dlq} {
		n := strings.TrimPrefix(id, namespace+".")
		if d := dups(t, tr, n, "kafka_partition, kafka_offset", "kafka_topic = '"+l.topic+"'"); d != 0 {
			t.Errorf("%s: %d Kafka records are there more than once", id, d)
		}
	}
	b, err := tr.count(ctx, strings.TrimPrefix(l.bronze, namespace+"."))
	if err != nil {
		t.Fatal(err)
	}
	d, err := tr.count(ctx, strings.TrimPrefix(l.dlq, namespace+"."))
	if err != nil {
		t.Fatal(err)
	}
	if b+d != int64(s.total()+extra) {
		t.Errorf("bronze %d + dead letters %d = %d rows, want the %d records produced plus %d", b, d, b+d, s.total(), extra)
	}
}

// checkLayers: silver holds each distinct good event produced once, its
// rejects each event without a title once, and gold agrees with silver,
// with no key twice anywhere. It also logs what a fresh silver and gold
// (new pipeline ids, reference tables) make of today's bronze.
func checkLayers(t *testing.T, tr *trino, l *lake, s *sample) {
	t.Helper()
	ctx := context.Background()
	short := func(id string) string { return strings.TrimPrefix(id, namespace+".") }
	wantSilver, wantRejects := s.silverCounts()
	for _, c := range []struct {
		tbl, key string
		want     int64
	}{
		{l.silver, "kafka_partition, kafka_offset", wantSilver},
		{l.rejects, "kafka_partition, kafka_offset", wantRejects},
		{l.daily, "day, source", -1},
		{l.terms, "hour, rank", -1},
	} {
		if d := dups(t, tr, short(c.tbl), c.key, ""); d != 0 {
			t.Errorf("%s: %d keys (%s) more than once", c.tbl, d, c.key)
		}
		n, err := tr.count(ctx, short(c.tbl))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.want >= 0 && n != c.want:
			t.Errorf("%s: %d rows, want %d (from what was produced)", c.tbl, n, c.want)
		case n == 0:
			t.Errorf("%s: empty", c.tbl)
		default:
			t.Logf("%s: %d rows", c.tbl, n)
		}
	}
	r, err := tr.query(ctx, `SELECT count(*) FROM `+short(l.daily)+` d FULL JOIN
		(SELECT CAST(timestamp AS date) AS day, source, count(*) AS n FROM `+short(l.silver)+` GROUP BY 1, 2) s
		ON d.day = s.day AND d.source = s.source WHERE d.events IS NULL OR s.n IS NULL OR d.events <> s.n`)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.Rows[0][0]) != "0" {
		t.Errorf("%s and %s disagree on %v (day, source) pairs", l.daily, l.silver, r.Rows[0][0])
	}
	// Every hour of silver has its terms in gold, ranked 1..n without gaps.
	r, err = tr.query(ctx, `SELECT count(*) FROM (SELECT date_trunc('hour', timestamp) AS hour FROM `+short(l.silver)+` GROUP BY 1) s
		FULL JOIN (SELECT hour, count(*) AS n, max(rank) AS top FROM `+short(l.terms)+` GROUP BY 1) g ON s.hour = g.hour
		WHERE s.hour IS NULL OR g.hour IS NULL OR g.n <> g.top`)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.Rows[0][0]) != "0" {
		t.Errorf("%s and %s disagree on %v hours", l.terms, l.silver, r.Rows[0][0])
	}
}

// silverCounts: the distinct (source, title, timestamp) of the good events
// produced that have a title, and the number of good events without one.
// The malformed values all become dead letters, so they count for neither.
func (s *sample) silverCounts() (events, rejects int64) {
	bad := map[string]bool{}
	for _, b := range badValues {
		bad[string(b)] = true
	}
	seen := map[string]bool{}
	for _, vs := range s.values {
		for _, v := range vs {
			var ev event
			if v == nil || bad[string(v)] {
				continue
			}
			if err := json.Unmarshal(v, &ev); err != nil {
				panic(err)
			}
			if ev.Title == nil {
				rejects++
				continue
			}
			seen[*ev.Source+"\x00"+*ev.Title+"\x00"+ev.Timestamp] = true
		}
	}
	return int64(len(seen)), rejects
}

// freshRun runs silver and gold with new pipeline ids into reference
// tables over today's bronze, and logs how their counts compare.
func freshRun(t *testing.T, tr *trino, l *lake) {
	t.Helper()
	ctx := context.Background()
	ref := &lake{t: t, id: l.id + "ref", topic: l.topic, bronze: l.bronze, dlq: l.dlq, dir: l.dir, runs: l.runs + 100}
	ref.silver, ref.rejects, ref.daily, ref.terms = l.silver+"_ref", l.rejects+"_ref", l.daily+"_ref", l.terms+"_ref"
	t.Cleanup(func() { purgeTables(t, ref.silver, ref.rejects, ref.daily, ref.terms) })
	ref.runSilver()
	ref.runGold()
	for _, p := range [][2]string{{l.silver, ref.silver}, {l.rejects, ref.rejects}} {
		a, _ := tr.count(ctx, strings.TrimPrefix(p[0], namespace+"."))
		b, _ := tr.count(ctx, strings.TrimPrefix(p[1], namespace+"."))
		t.Logf("a fresh silver over the maintained bronze: %s has %d rows, %s %d", p[0], a, p[1], b)
	}
}

// dups counts the keys that occur more than once in a table.
func dups(t *testing.T, tr *trino, tbl, key, where string) int64 {
	t.Helper()
	if where != "" {
		where = " WHERE " + where
	}
	n, err := tr.count(context.Background(), "(SELECT "+key+" FROM "+tbl+where+" GROUP BY "+key+" HAVING count(*) > 1)")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitRows waits until bronze and its dead letters hold want rows together.
func waitRows(t *testing.T, tr *trino, bronze, dlq string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b, d int64
	if err := wait.Every(ctx, time.Second, func() error {
		b, _ = tr.count(ctx, bronze)
		d, _ = tr.count(ctx, dlq)
		if b+d < int64(want) {
			return errors.New("not yet")
		}
		return nil
	}); err != nil {
		t.Fatalf("bronze %d + dead letters %d rows after 2 minutes, want %d", b, d, want)
	}
}

// bronzeRun is a streaming bronze a test started (startBronze), its output
// in log.
type bronzeRun struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once it exited, with err
	err  error
	once sync.Once
}

// startBronze starts a streaming bronze on the lake's topic and tables with
// extra flags. Stop it with stop or kill; a test's cleanup kills it if it
// still runs.
func (l *lake) startBronze(extra ...string) *bronzeRun {
	l.t.Helper()
	l.runs++
	b := &bronzeRun{t: l.t, log: filepath.Join(l.dir, fmt.Sprintf("%02d-bronze-streaming.log", l.runs)), done: make(chan struct{})}
	f, err := os.Create(b.log)
	if err != nil {
		l.t.Fatal(err)
	}
	b.cmd = exec.Command(bronzeBin, l.bronzeArgs(extra...)...)
	b.cmd.Stdout, b.cmd.Stderr = f, f
	if err := b.cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	go func() { b.err = b.cmd.Wait(); f.Close(); close(b.done) }()
	l.t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// exited fails the test if bronze has exited.
func (b *bronzeRun) exited() {
	select {
	case <-b.done:
		b.t.Fatalf("streaming bronze exited: %v\n%s", b.err, cmdtest.TailFile(b.log, 40))
	default:
	}
}

// commits is the number of commits in bronze's log so far.
func (b *bronzeRun) commits() int {
	out, _ := os.ReadFile(b.log)
	return bytes.Count(out, []byte("msg=committed"))
}

// stop stops bronze with SIGTERM, as Kubernetes does, and fails the test
// unless it exits 0 within a minute.
func (b *bronzeRun) stop() {
	b.once.Do(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.done:
			if b.err != nil {
				b.t.Errorf("streaming bronze after SIGTERM: %v\n%s", b.err, cmdtest.TailFile(b.log, 40))
			}
		case <-time.After(time.Minute):
			_ = b.cmd.Process.Kill()
			b.t.Errorf("streaming bronze did not stop within a minute of SIGTERM")
		}
	})
}

// kill kills bronze with SIGKILL, a crash, and waits for it to exit.
func (b *bronzeRun) kill() {
	b.once.Do(func() {
		_ = b.cmd.Process.Kill()
		<-b.done
	})
}
