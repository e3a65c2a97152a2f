//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/parse/event"
)

// The happy path: 200k events, the malformed corpus, the valid samples and
// a tombstone, sent by kcat (part of them in a Kafka transaction, so that
// offsets have gaps), then one --bounded run.
func TestHappyPath(t *testing.T) {
	e := newEnv(t, "happy", 8)
	var sent [][]byte
	batch := func(lo, hi int) [][]byte {
		var v [][]byte
		for i := lo; i < hi; i++ {
			v = append(v, validEvent(i))
		}
		sent = append(sent, v...)
		return v
	}
	e.produce(batch(0, 100_000))
	// A committed transaction: its markers take offsets that hold no record.
	e.produce(batch(100_000, 101_000), "-X", "transactional.id="+e.pipe, "-X", "transaction.timeout.ms=300000")
	e.produce(batch(101_000, 200_000))
	tail := append(append([][]byte{}, event.ValidSamples...), event.MalformedCorpus...)
	e.produce(tail)
	sent = append(sent, tail...)
	e.produceTombstone("tombstone")
	more := batch(200_000, 200_016) // every partition ends with a record, not a marker
	e.produce(more)

	truth := e.consumeAll()
	checkDelivered(t, sent, truth)
	if len(truth) != len(sent)+1 {
		t.Fatalf("Kafka holds %d records, %d values and a tombstone were sent", len(truth), len(sent))
	}
	ends := e.endOffsets()
	gaps := 0
	for p, end := range ends {
		n := 0
		for _, k := range truth {
			if k.P == p {
				n++
			}
		}
		gaps += int(end) - n
	}
	t.Logf("%d records, %d offsets taken by transaction markers", len(truth), gaps)

	took := e.runBounded(5 * time.Minute)
	t.Logf("bounded run: %d records in %v (%.0f records/s, process start included)", len(truth), took.Round(time.Millisecond), float64(len(truth))/took.Seconds())
	res := e.verify(truth, verifyOpts{snapshots: true})
	e.checkSnapshots(res["spark"], e.table, e.dlq, ends)

	// A second bounded run finds nothing new and commits nothing.
	e.runBounded(2 * time.Minute)
	tb := e.scan(e.table, e.dlq)
	if len(tb.events)+len(tb.dlq) != len(truth) {
		t.Fatalf("after a second run the tables hold %d rows, want %d", len(tb.events)+len(tb.dlq), len(truth))
	}
}

// streamRate is how many values a second the streaming tests produce.
const streamRate = 2000

// Crashes: the streaming pipeline is killed with SIGKILL twice mid-stream
// and restarted each time, while kcat keeps producing.
func TestCrashes(t *testing.T) {
	e := newEnv(t, "crash", 8)
	sp := e.startProducer(streamRate, streamEvent)
	p := e.startBronze()
	for i := range 2 {
		d := 9*time.Second + rand.N(6*time.Second)
		time.Sleep(d)
		if !p.running() {
			t.Fatalf("%s exited by itself: %v\n%s", p.name, p.err, cmdtest.TailFile(p.log, 40))
		}
		p.kill9()
		t.Logf("kill -9 #%d after %v (%d values sent so far; that run made %d commits)", i+1, d.Round(time.Millisecond), sp.count(), countLines(p.log, `msg=committed`))
		p = e.startBronze()
	}
	e.waitCommits(p, 0, 2*time.Minute) // the last run streams
	e.finishStream(sp, p, "")
}

// waitCommits waits up to timeout until the running pipeline p has logged
// more than after commits.
func (e *env) waitCommits(p *proc, after int, timeout time.Duration) {
	e.t.Helper()
	wait.For(e.t, timeout, func() error {
		if n := countLines(p.log, `msg=committed`); n <= after {
			if !p.running() {
				e.t.Fatalf("%s exited: %v\n%s", p.name, p.err, cmdtest.TailFile(p.log, 40))
			}
			return fmt.Errorf("%s logged %d commits, want more than %d", p.name, n, after)
		}
		return nil
	})
}

// finishStream stops the producer, waits until the running pipeline p has
// every record in the tables, stops it cleanly, runs --bounded once more
// (it must find nothing to do), and checks exactly-once everywhere.
func (e *env) finishStream(sp *streamProducer, p *proc, wantLog string) {
	t := e.t
	t.Helper()
	sent := sp.finish(t)
	truth := e.consumeAll()
	checkDelivered(t, sent, truth)
	ends := e.endOffsets()
	e.waitRows(p, len(truth), 4*time.Minute)
	if wantLog != "" {
		checkLogged(t, p, wantLog)
	}
	e.terminate(p, 2*time.Minute)
	e.runBounded(2 * time.Minute)
	res := e.verify(truth, verifyOpts{snapshots: true})
	e.checkSnapshots(res["spark"], e.table, e.dlq, ends)
}

// MinIO outage: MinIO is stopped for 20 s mid-stream. The pipeline must
// wait and retry: not exit, not skip.
func TestMinIOOutage(t *testing.T) {
	e := newEnv(t, "minio_outage", 8)
	sp := e.startProducer(streamRate, streamEvent)
	p := e.startBronze()
	e.outage(p, "minio", 20*time.Second)
	e.finishStream(sp, p, "retrying")
}

// checkLogged fails the test unless p logged want (during an outage), and
// shows which operations it retried.
func checkLogged(t *testing.T, p *proc, want string) {
	t.Helper()
	if n := countLines(p.log, want); n == 0 {
		t.Errorf("%s never logged %q during the outage", p.name, want)
	} else {
		t.Logf("%s logged %q %d times:\n%s", p.name, want, n, retriedOps(p.log))
	}
}

// outage stops a service (a testing/services script) for d in the middle
// of the stream that p is ingesting, once a few windows are committed, and
// starts it again. p must stay up all along.
func (e *env) outage(p *proc, service string, d time.Duration) {
	t := e.t
	t.Helper()
	e.waitRows(p, 4*streamRate, 2*time.Minute) // a few windows committed: mid-stream
	mustScript(t, service, "stop")
	down := time.Now()
	time.Sleep(d)
	if !p.running() {
		mustScript(t, service, "start")
		t.Fatalf("%s exited while %s was down: %v\n%s", p.name, service, p.err, cmdtest.TailFile(p.log, 40))
	}
	back := countLines(p.log, `msg=committed`)
	mustScript(t, service, "start")
	t.Logf("%s was down for %v", service, time.Since(down).Round(100*time.Millisecond))
	e.waitCommits(p, back, 2*time.Minute) // p commits again
}

// Kafka outage: the broker restarts mid-stream (kafka.sh restart keeps its
// data). The pipeline must reconnect and go on.
func TestKafkaOutage(t *testing.T) {
	e := newEnv(t, "kafka_outage", 8)
	sp := e.startProducer(streamRate, streamEvent)
	p := e.startBronze()
	e.waitRows(p, 4*streamRate, 2*time.Minute)
	down := time.Now()
	mustScript(t, "kafka", "restart")
	t.Logf("Kafka restart took %v", time.Since(down).Round(100*time.Millisecond))
	if !p.running() {
		t.Fatalf("%s exited during the broker restart: %v\n%s", p.name, p.err, cmdtest.TailFile(p.log, 40))
	}
	e.waitCommits(p, countLines(p.log, `msg=committed`), 2*time.Minute) // p reads and commits after the restart
	e.finishStream(sp, p, "")
}

// Valid Iceberg: Spark reads our snapshot history and offsets summary,
// registers copies of both tables, and appends a row of its own to the
// bronze copy. Bronze then runs again on the copies: it must commit on top
// of Spark's snapshot and resume from its own offsets, so that every record
// is there exactly once, next to Spark's row.
func TestSparkInterop(t *testing.T) {
	e := newEnv(t, "interop", 4)
	var sent [][]byte
	for i := range 5000 {
		sent = append(sent, streamEvent(i))
	}
	e.produce(sent)
	e.runBounded(3 * time.Minute)
	first := e.consumeAll()

	copyT, copyD := e.table+"_copy", e.dlq+"_copy"
	e.more = append(e.more, copyT, copyD)
	metaT, metaD := e.metadataLocation(e.table), e.metadataLocation(e.dlq)
	stmts := []string{
		fmt.Sprintf("SELECT snapshot_id, operation, summary['haade.pipeline'], summary['haade.kafka.offsets'] FROM local.%s.snapshots ORDER BY committed_at", e.table),
		fmt.Sprintf("CALL local.system.register_table(table => '%s', metadata_file => '%s')", copyT, metaT),
		fmt.Sprintf("CALL local.system.register_table(table => '%s', metadata_file => '%s')", copyD, metaD),
		fmt.Sprintf("INSERT INTO local.%s (source, title, timestamp, ingested_at, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, extra, kafka_key, kafka_headers, kafka_timestamp_type) "+
			"VALUES ('spark', 'a row written by Spark', TIMESTAMP '2026-05-19 12:00:00', current_timestamp(), 'spark-written', -1, 0, NULL, '{\"by\":\"spark\"}', NULL, NULL, NULL)", copyT),
		fmt.Sprintf("SELECT count(*) FROM local.%s", copyT),
	}
	sb, _ := json.Marshal(stmts)
	res := e.readEngines("--sql", e.writeFile("statements.json", sb), "--table", e.table, "--table", copyT, "--snapshots")
	sq := res["spark"].SQL
	if len(sq) != len(stmts) {
		t.Fatalf("Spark ran %d statements, want %d", len(sq), len(stmts))
	}
	// Spark's view of our snapshot history and the offsets summary.
	ends := e.endOffsets()
	hist := sq[0].Rows
	if len(hist) == 0 {
		t.Fatal("Spark sees no snapshots")
	}
	lastRow := hist[len(hist)-1]
	if lastRow[1] == nil || *lastRow[1] != "append" || lastRow[2] == nil || *lastRow[2] != e.pipe || lastRow[3] == nil {
		t.Fatalf("Spark's newest snapshot row %v: want an append of pipeline %s with offsets", deref(lastRow), e.pipe)
	}
	sparkOffsets := offsetsOf(t, *lastRow[3], e.topic)
	t.Logf("Spark read %d snapshots of %s; newest haade.kafka.offsets %s", len(hist), e.table, *lastRow[3])
	// Everything of this small run went to bronze and the DLQ in the same windows.
	tb := e.scan(e.table, e.dlq)
	if len(tb.events)+len(tb.dlq) != len(first) {
		t.Fatalf("first run: %d rows, want %d", len(tb.events)+len(tb.dlq), len(first))
	}
	dlqOffsets := e.newestOffsets(e.dlq)
	for p, end := range ends {
		if max(sparkOffsets[p], dlqOffsets[p]) != end {
			t.Errorf("partition %d: offsets Spark read %v (dead letters %v), Kafka's end %d", p, sparkOffsets, dlqOffsets, end)
		}
	}
	if got := deref(sq[4].Rows[0])[0]; got != fmt.Sprint(len(tb.events)+1) {
		t.Fatalf("Spark counts %s rows in the copy after its append, want %d", got, len(tb.events)+1)
	}
	cs := lineage(t, res["spark"].Tables[copyT].Snapshots)
	if n := len(cs); n < 2 || cs[n-1].Summary["haade.pipeline"] != "" || cs[n-1].Operation != "append" {
		t.Fatalf("the copy's newest snapshot should be Spark's append: %+v", cs[n-1])
	}
	sparkSnap := cs[len(cs)-1].SnapshotID

	// Bronze on the copies, with new records.
	var sent2 [][]byte
	for i := 5000; i < 8000; i++ {
		sent2 = append(sent2, streamEvent(i))
	}
	e.produce(sent2)
	e.runBounded(3*time.Minute, "--table="+copyT, "--dlq-table="+copyD)
	truth := e.consumeAll()
	checkDelivered(t, append(sent, sent2...), truth)
	res = e.verify(truth, verifyOpts{bronze: copyT, dlq: copyD, snapshots: true,
		foreign: func(r map[string]any) bool {
			return r["kafka_topic"] == "spark-written" && r["source"] == "spark" && r["extra"] == `{"by":"spark"}`
		}})
	e.checkSnapshots(res["spark"], copyT, copyD, e.endOffsets())
	// Our snapshot follows Spark's.
	cs = res["spark"].Tables[copyT].Snapshots
	after := false
	for _, s := range cs {
		if s.ParentID != nil && *s.ParentID == sparkSnap && s.Summary["haade.pipeline"] == e.pipe {
			after = true
		}
	}
	if !after {
		t.Errorf("no snapshot of pipeline %s has Spark's snapshot %d as parent: %+v", e.pipe, sparkSnap, cs)
	}
	// The originals did not change.
	if tb2 := e.scan(e.table, e.dlq); len(tb2.events) != len(tb.events) || len(tb2.dlq) != len(tb.dlq) {
		t.Errorf("the original tables changed: %d+%d rows, were %d+%d", len(tb2.events), len(tb2.dlq), len(tb.events), len(tb.dlq))
	}
}

func deref(r []*string) []string {
	out := make([]string, len(r))
	for i, s := range r {
		if s == nil {
			out[i] = "<null>"
		} else {
			out[i] = *s
		}
	}
	return out
}

func (e *env) metadataLocation(ident string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := e.catalog().Open(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer closeCatalog(cat)
	id, _ := icebergio.Identifier(ident)
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.HasPrefix(tbl.MetadataLocation(), "s3://") {
		e.t.Fatalf("metadata location %q", tbl.MetadataLocation())
	}
	return tbl.MetadataLocation()
}

// newestOffsets returns the offsets of the topic that the pipeline's newest
// snapshot of the table holds, as icebergio reads them.
func (e *env) newestOffsets(ident string) map[int32]int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := e.catalog().Open(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer closeCatalog(cat)
	st, err := icebergio.Stat(ctx, cat, ident, e.pipe)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Offsets[e.topic]
}

var opRE = regexp.MustCompile(`msg=retrying op=("[^"]*"|\S+)(?: table=(\S+))?`)

// retriedOps counts the retry log lines of each operation.
func retriedOps(path string) string {
	b, _ := os.ReadFile(path)
	n := map[string]int{}
	for _, m := range opRE.FindAllSubmatch(b, -1) {
		n[strings.Trim(string(m[1]), `"`)+" "+string(m[2])]++
	}
	var out []string
	for op, c := range n {
		out = append(out, fmt.Sprintf("  %4d x %s", c, op))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
