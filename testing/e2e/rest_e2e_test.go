//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/tables"
)

// restURI is Apache Iceberg's REST catalog test server that
// testing/services/rest.sh runs (a JdbcCatalog on its own SQLite file, the
// warehouse s3://warehouse/ on MinIO through S3FileIO).
const restURI = "http://127.0.0.1:8181"

// restFlags point bronze at the REST catalog; they follow bronzeArgs' SQL
// catalog flags on the command line, and the last one of a flag wins.
var restFlags = []string{"--catalog=rest", "--catalog-uri=" + restURI}

func restCatalog() icebergio.CatalogConfig {
	return icebergio.CatalogConfig{Type: "rest", Name: "local", URI: restURI, Warehouse: warehouse, S3Endpoint: s3Endpoint}
}

// Bronze through an Iceberg REST catalog: Java's REST catalog server (the
// apache/iceberg-rest-fixture code) holds the tables, bronze commits through
// its commit endpoint, and pyiceberg's RestCatalog reads them back. Two
// bounded runs: the second must add exactly what was produced after the
// first, resuming from the offsets the REST catalog's snapshots hold; a third
// finds nothing to do and commits nothing.
func TestRESTCatalog(t *testing.T) {
	e := newRESTEnv(t, "rest", 4)

	var sent [][]byte
	for i := range 6000 {
		sent = append(sent, validEvent(i))
	}
	e.produce(sent)
	tail := append(append([][]byte{}, event.ValidSamples...), event.MalformedCorpus...)
	e.produce(tail)
	sent = append(sent, tail...)
	e.produceTombstone("tombstone")
	truth1 := e.consumeAll()
	checkDelivered(t, sent, truth1)
	if len(truth1) != len(sent)+1 {
		t.Fatalf("Kafka holds %d records, %d values and a tombstone were sent", len(truth1), len(sent))
	}

	took := e.runBounded(3*time.Minute, restFlags...)
	t.Logf("first bounded run through the REST catalog: %d records in %v", len(truth1), took.Round(time.Millisecond))
	s1 := e.checkREST(truth1)

	// More events, every 250th of them malformed: the second run must add
	// exactly these, to both tables, on top of the first run's snapshots.
	var sent2 [][]byte
	for i := 6000; i < 9000; i++ {
		sent2 = append(sent2, streamEvent(i))
	}
	e.produce(sent2)
	truth2 := e.consumeAll()
	checkDelivered(t, append(sent, sent2...), truth2)
	if len(truth2) != len(truth1)+len(sent2) {
		t.Fatalf("Kafka holds %d records after the second batch, want %d", len(truth2), len(truth1)+len(sent2))
	}
	e.runBounded(3*time.Minute, restFlags...)
	s2 := e.checkREST(truth2)
	newBronze, newDLQ := 0, 0
	old := map[key]bool{}
	for _, k := range truth1 {
		old[key{k.P, k.O}] = true
	}
	for _, k := range truth2 {
		if old[key{k.P, k.O}] {
			continue
		}
		if _, dlq := expectedRow(t, e.topic, k); dlq {
			newDLQ++
		} else {
			newBronze++
		}
	}
	if newDLQ == 0 || newBronze == 0 {
		t.Fatalf("the second batch should reach both tables: %d events, %d dead letters", newBronze, newDLQ)
	}
	for _, c := range []struct {
		ident     string
		before    restTable
		after     restTable
		wantAdded int
	}{{e.table, s1.bronze, s2.bronze, newBronze}, {e.dlq, s1.dlq, s2.dlq, newDLQ}} {
		if got := c.after.rows - c.before.rows; got != c.wantAdded {
			t.Errorf("%s: the second run added %d rows, want exactly the %d new ones", c.ident, got, c.wantAdded)
		}
		if c.after.snapshots <= c.before.snapshots {
			t.Errorf("%s: %d snapshots after the second run, %d before: no new commit", c.ident, c.after.snapshots, c.before.snapshots)
		}
		// The new snapshots descend from the first run's current one.
		if !descends(c.after.py.Snapshots, c.before.current) {
			t.Errorf("%s: the current snapshot does not descend from the first run's %d: %+v", c.ident, c.before.current, c.after.py.Snapshots)
		}
	}
	t.Logf("second run added %d events and %d dead letters (%d and %d snapshots now)", newBronze, newDLQ, s2.bronze.snapshots, s2.dlq.snapshots)

	// Nothing new: a third run commits nothing.
	e.runBounded(2*time.Minute, restFlags...)
	s3 := e.checkREST(truth2)
	if s3.bronze.snapshots != s2.bronze.snapshots || s3.dlq.snapshots != s2.dlq.snapshots {
		t.Errorf("a run with nothing new committed: snapshots %d+%d, were %d+%d",
			s3.bronze.snapshots, s3.dlq.snapshots, s2.bronze.snapshots, s2.dlq.snapshots)
	}
}

// descends reports whether snapshot id is current or an ancestor of it.
func descends(snaps []restSnapshot, id int64) bool {
	parent := map[int64]*int64{}
	for _, s := range snaps {
		parent[s.SnapshotID] = s.ParentID
	}
	if len(snaps) == 0 {
		return false
	}
	// pyiceberg lists the snapshots in metadata order: the last one is current.
	cur := &snaps[len(snaps)-1].SnapshotID
	for cur != nil {
		if *cur == id {
			return true
		}
		cur = parent[*cur]
	}
	return false
}

// REST catalog outage: the catalog server is stopped for 15 s mid-stream.
// Bronze must wait and retry, neither exit nor skip, and every record must
// land exactly once.
func TestRESTOutage(t *testing.T) {
	e := newRESTEnv(t, "rest_outage", 4)
	sp := e.startProducer(streamRate, streamEvent)
	p := e.startBronze(restFlags...)
	e.outage(p, "rest", 15*time.Second)

	sent := sp.finish(t)
	truth := e.consumeAll()
	checkDelivered(t, sent, truth)
	e.waitRows(p, len(truth), 4*time.Minute)
	checkLogged(t, p, "retrying")
	e.terminate(p, 2*time.Minute)
	e.runBounded(2*time.Minute, restFlags...)
	e.checkREST(truth)
}

// newRESTEnv is newEnv for the REST catalog: MinIO, Kafka and the REST
// catalog server instead of PostgreSQL, a fresh topic, and, when the test
// passes, the topic deleted and the tables dropped through the REST catalog,
// files and all. When it fails they are kept, and the logs of every bronze
// run and the end of the REST server's log are shown.
func newRESTEnv(t *testing.T, name string, partitions int) *env {
	t.Helper()
	services(t, "minio", "kafka", "rest")
	e := startEnv(t, name, partitions, "the REST catalog "+restURI, func(*env) icebergio.CatalogConfig { return restCatalog() })
	run := os.Getenv("HAADE_RUN")
	if run == "" {
		run = "/tmp/haade-services"
	}
	e.logs = append(e.logs, filepath.Join(run, "logs", "rest.log"))
	return e
}

// restTable is one table's state as the REST catalog serves it.
type restTable struct {
	rows      int   // rows read by icebergio.ScanRows
	snapshots int   // snapshots in the metadata
	current   int64 // the current snapshot's id
	location  string
	offsets   map[int32]int64 // the pipeline's offsets, as icebergio reads them (snapshots and the progress property)
	// summary holds the offsets in the current snapshot's summary: a bounded
	// run records the offsets of windows without rows in the progress
	// property only, so they can be behind offsets.
	summary map[int32]int64
	py      *restPyTable
}

type restState struct{ bronze, dlq restTable }

// restPyTable and restPyOut are what py/read_rest.py prints.
type restPyTable struct {
	Location     string `json:"location"`
	Count        int64  `json:"count"`
	DistinctKeys int64  `json:"distinct_keys"`
	Partitions   []struct {
		Partition int32 `json:"partition"`
		Count     int64 `json:"count"`
		Min       int64 `json:"min"`
		Max       int64 `json:"max"`
	} `json:"partitions"`
	Snapshots []restSnapshot `json:"snapshots"`
}

type restSnapshot struct {
	SnapshotID int64             `json:"snapshot_id"`
	ParentID   *int64            `json:"parent_id"`
	Operation  string            `json:"operation"`
	Summary    map[string]string `json:"summary"`
}

type restPyOut struct {
	Tables        map[string]*restPyTable `json:"tables"`
	UnionDistinct int64                   `json:"union_distinct"`
}

// checkREST is the exactly-once check through the REST catalog: every
// record of the topic (truth) is in exactly one of the two tables, the right
// one, with the right content, and no other row is there, as
// icebergio.ScanRows reads them; the newest snapshots hold Kafka's end
// offsets; and pyiceberg's RestCatalog, reading independently, counts the
// same rows, distinct (partition, offset) pairs and snapshots.
func (e *env) checkREST(truth []krec) restState {
	t := e.t
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var events []tables.BronzeEvent
	var dead []tables.DeadLetter
	if err := icebergio.ScanRows(ctx, restCatalog(), e.table, &events); err != nil {
		t.Fatalf("ScanRows %s through the REST catalog: %v", e.table, err)
	}
	if err := icebergio.ScanRows(ctx, restCatalog(), e.dlq, &dead); err != nil {
		t.Fatalf("ScanRows %s through the REST catalog: %v", e.dlq, err)
	}

	byKey := map[key]krec{}
	for _, k := range truth {
		byKey[key{k.P, k.O}] = k
	}
	wantBronze, wantDLQ := 0, 0
	for _, k := range truth {
		if _, dlq := expectedRow(t, e.topic, k); dlq {
			wantDLQ++
		} else {
			wantBronze++
		}
	}
	seen := map[key]string{}
	check := func(ident string, isDLQ bool, r map[string]any) {
		if r["kafka_topic"] != e.topic {
			t.Fatalf("%s: row from topic %v, not %s: %v", ident, r["kafka_topic"], e.topic, r)
		}
		checkRow(t, e.topic, ident, isDLQ, r, byKey, seen)
	}
	for _, ev := range events {
		check(e.table, false, eventRow(ev))
	}
	for _, d := range dead {
		check(e.dlq, true, dlqRow(d))
	}
	if len(events) != wantBronze || len(dead) != wantDLQ {
		t.Errorf("the tables hold %d events and %d dead letters, want exactly %d and %d", len(events), len(dead), wantBronze, wantDLQ)
	}
	if len(seen) != len(truth) {
		t.Errorf("%d distinct (partition, offset) in both tables, want %d", len(seen), len(truth))
	}
	if t.Failed() {
		t.FailNow()
	}

	// The snapshots, through iceberg-go's REST catalog.
	cat, err := restCatalog().Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCatalog(cat)
	var st restState
	for _, x := range []struct {
		ident string
		out   *restTable
		rows  int
	}{{e.table, &st.bronze, len(events)}, {e.dlq, &st.dlq, len(dead)}} {
		s, err := icebergio.Stat(ctx, cat, x.ident, e.pipe)
		if err != nil {
			t.Fatalf("Stat %s: %v", x.ident, err)
		}
		id, _ := icebergio.Identifier(x.ident)
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		*x.out = restTable{rows: x.rows, snapshots: s.Snapshots, location: s.Location, offsets: s.Offsets[e.topic]}
		if cs := tbl.CurrentSnapshot(); cs != nil {
			x.out.current = cs.SnapshotID
			if cs.Summary != nil {
				x.out.summary = offsetsOf(t, cs.Summary.Properties[icebergio.SummaryOffsets], e.topic)
			}
		}
		// JdbcCatalog's layout (warehouse/namespace/table), not iceberg-go's SQL catalog's (namespace.db).
		if !strings.HasPrefix(s.Location, warehouse+namespace+"/") {
			t.Errorf("%s is at %s: not a table the REST catalog placed", x.ident, s.Location)
		}
	}
	ends := e.endOffsets()
	for p, end := range ends {
		if got := max(st.bronze.offsets[p], st.dlq.offsets[p]); got != end {
			t.Errorf("partition %d: the newest snapshots hold offset %d (bronze %v, dead letters %v), Kafka's end is %d",
				p, got, st.bronze.offsets, st.dlq.offsets, end)
		}
	}

	// pyiceberg's RestCatalog, on its own.
	py := e.readREST()
	if py.UnionDistinct != int64(len(truth)) {
		t.Errorf("pyiceberg: count(DISTINCT partition, offset) over both tables = %d, want %d", py.UnionDistinct, len(truth))
	}
	for _, x := range []struct {
		ident string
		out   *restTable
		want  int
	}{{e.table, &st.bronze, wantBronze}, {e.dlq, &st.dlq, wantDLQ}} {
		got := py.Tables[x.ident]
		if got == nil {
			t.Fatalf("pyiceberg did not read %s", x.ident)
		}
		x.out.py = got
		if got.Count != int64(x.want) || got.DistinctKeys != got.Count {
			t.Errorf("pyiceberg: %s count(*) = %d, count(DISTINCT kafka_partition, kafka_offset) = %d; want both %d",
				x.ident, got.Count, got.DistinctKeys, x.want)
		}
		if got.Location != x.out.location {
			t.Errorf("pyiceberg: %s is at %s, iceberg-go says %s", x.ident, got.Location, x.out.location)
		}
		if len(got.Snapshots) != x.out.snapshots {
			t.Errorf("pyiceberg: %s has %d snapshots, iceberg-go says %d", x.ident, len(got.Snapshots), x.out.snapshots)
		}
		for _, s := range got.Snapshots {
			if s.Operation != "append" || s.Summary[icebergio.SummaryPipeline] != e.pipe {
				t.Errorf("pyiceberg: %s snapshot %d: operation %q by %q, want appends by %s", x.ident, s.SnapshotID, s.Operation, s.Summary[icebergio.SummaryPipeline], e.pipe)
			}
		}
		if n := len(got.Snapshots); n > 0 {
			newest := got.Snapshots[n-1]
			if newest.SnapshotID != x.out.current {
				t.Errorf("pyiceberg: %s's last snapshot is %d, iceberg-go's current is %d", x.ident, newest.SnapshotID, x.out.current)
			}
			if off := offsetsOf(t, newest.Summary[icebergio.SummaryOffsets], e.topic); fmt.Sprint(off) != fmt.Sprint(x.out.summary) {
				t.Errorf("pyiceberg: %s's newest offsets %v, iceberg-go reads %v", x.ident, off, x.out.summary)
			}
		}
	}
	t.Logf("REST catalog: %s %d rows in %d snapshots, %s %d rows in %d snapshots; every one of the %d records exactly once; pyiceberg agrees (%v)",
		e.table, st.bronze.rows, st.bronze.snapshots, e.dlq, st.dlq.rows, st.dlq.snapshots, len(truth), time.Since(start).Round(100*time.Millisecond))
	return st
}

// readREST runs py/read_rest.py: pyiceberg's RestCatalog reads both tables.
func (e *env) readREST() *restPyOut {
	e.t.Helper()
	outFile := filepath.Join(e.dir, "rest.json")
	_ = os.Remove(outFile)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot, "testing/services/python.sh"), "python",
		filepath.Join(repoRoot, "testing/e2e/py/read_rest.py"), "--uri", restURI,
		"--table", e.table, "--table", e.dlq, "--union", e.table+","+e.dlq, "--out", outFile)
	var logb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logb, &logb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("read_rest.py: %v\n%s", err, lastLines(logb.String(), 60))
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		e.t.Fatal(err)
	}
	var out restPyOut
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("read_rest.py output: %v", err)
	}
	return &out
}
