package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/wait"
)

// A streaming bronze with --lineage: START (STREAMING) when it starts, and
// COMPLETE after SIGTERM stops it cleanly, with the snapshots its tables
// got, as the tables record them.
func TestStreamingLineageCompletesOnSIGTERM(t *testing.T) {
	e := newEnv(t, 4)
	e.produce(sample(1500, 11))
	events := filepath.Join(t.TempDir(), "events.ndjson")
	args := []string{
		"--brokers=" + e.cfg.Kafka.Brokers[0], "--catalog-uri=" + e.cfg.Catalog.URI, "--warehouse=" + e.cfg.Catalog.Warehouse,
		"--commit-interval=1s", "--metrics-addr=", "--lineage=file://" + events,
	}
	var out, errb cmdtest.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, func(string) string { return "" }, &out, &errb) }()

	wait.For(t, 60*time.Second, func() error {
		if have := e.rowsInTables(); have != e.count() {
			select {
			case code := <-done:
				t.Fatalf("run returned %d before the signal; stderr:\n%s", code, errb.String())
			default:
			}
			return fmt.Errorf("streaming run committed %d of %d rows", have, e.count())
		}
		return nil
	})
	evs := readLineage(t, events)
	if len(evs) != 1 || evs[0].EventType != lineage.Start {
		t.Fatalf("while streaming: events %+v, want START alone", evs)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of SIGTERM")
	}
	evs = readLineage(t, events)
	if len(evs) != 2 || evs[1].EventType != lineage.Complete || evs[0].Run.RunID != evs[1].Run.RunID {
		t.Fatalf("events %+v: want START then COMPLETE of one run", evs)
	}
	var jt lineage.JobType
	decodeFacet(t, evs[0].Job.Facets["jobType"], &jt)
	if jt.ProcessingType != "STREAMING" {
		t.Errorf("jobType %+v, want STREAMING", jt)
	}
	if in := evs[0].Inputs; len(in) != 1 || in[0].Namespace != "kafka://"+e.cfg.Kafka.Brokers[0] || in[0].Name != e.cfg.Kafka.Topic {
		t.Errorf("inputs %+v, want the topic on kafka://%s", in, e.cfg.Kafka.Brokers[0])
	}
	cat, err := e.cfg.Catalog.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, o := range evs[1].Outputs {
		var snaps lineage.SnapshotsFacet
		var stats lineage.OutputStatistics
		decodeFacet(t, o.OutputFacets["haade_snapshots"], &snaps)
		decodeFacet(t, o.OutputFacets["outputStatistics"], &stats)
		var want, got []int64
		for _, s := range icebergtest.Snapshots(t, cat, o.Name) {
			want = append(want, s.ID)
		}
		for _, s := range snaps.Snapshots {
			got = append(got, s.SnapshotID)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: snapshots %v in the event, %v in the table", o.Name, got, want)
		}
		rows += stats.RowCount
	}
	if rows != int64(e.count()) {
		t.Errorf("COMPLETE counts %d rows, the run wrote %d", rows, e.count())
	}
}

func readLineage(t *testing.T, path string) []lineage.RunEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []lineage.RunEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev lineage.RunEvent
		// Snapshot ids use all 63 bits: keep them exact, not float64.
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func decodeFacet(t *testing.T, f any, v any) {
	t.Helper()
	b, _ := json.Marshal(f)
	if f == nil || json.Unmarshal(b, v) != nil {
		t.Fatalf("facet %v: cannot decode into %T", f, v)
	}
}
