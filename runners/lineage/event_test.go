package lineage

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readEvents reads an ndjson file of events as generic JSON, so that the
// comparison sees the wire form, not the Go types.
func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// wire is v as generic JSON.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkRunIDs checks that every event has a UUIDv7 run id and an RFC 3339
// UTC event time, that the events share one id, and removes both so that
// the rest compares exactly.
func checkRunIDs(t *testing.T, evs []map[string]any) {
	t.Helper()
	var id string
	for i, ev := range evs {
		run := ev["run"].(map[string]any)
		got, _ := run["runId"].(string)
		if !uuidRE.MatchString(got) {
			t.Errorf("event %d: runId %q is not a UUIDv7", i, got)
		}
		if i == 0 {
			id = got
		} else if got != id {
			t.Errorf("event %d: runId %q, want %q as the run's START", i, got, id)
		}
		et, _ := ev["eventTime"].(string)
		if ts, err := time.Parse(time.RFC3339Nano, et); err != nil || !strings.HasSuffix(et, "Z") || time.Since(ts) > time.Minute {
			t.Errorf("event %d: eventTime %q: want a recent RFC 3339 UTC time (%v)", i, et, err)
		}
		delete(run, "runId")
		delete(ev, "eventTime")
	}
}

func TestEventShapes(t *testing.T) {
	kafka := KafkaTopic([]string{"127.0.0.1:9092", "127.0.0.2:9092"}, "fintech.debt.raw")
	schema := NewSchemaFacet([]SchemaField{{Name: "source", Type: "string"}, {Name: "kafka_offset", Type: "long"},
		{Name: "tags", Type: "list", Fields: []SchemaField{{Name: "element", Type: "string"}}}})
	out := []OutputDataset{{Namespace: "s3://warehouse", Name: "lakehouse.bronze_events", Facets: map[string]any{"schema": schema}}}
	done := []OutputDataset{{Namespace: "s3://warehouse", Name: "lakehouse.bronze_events", Facets: map[string]any{"schema": schema},
		OutputFacets: map[string]any{
			"outputStatistics": NewOutputStatistics(4961, 123456, 2),
			"haade_snapshots":  NewSnapshotsFacet(42, []Snapshot{{SnapshotID: 41, Operation: "append", AddedRecords: 4000, TimestampMs: 1}, {SnapshotID: 42, Operation: "append", AddedRecords: 961, TimestampMs: 2}}),
		}}}
	jobFacets := func(pt string) map[string]any {
		return map[string]any{"jobType": map[string]any{"_producer": Producer, "_schemaURL": jobTypeFacetURL,
			"processingType": pt, "integration": "HAADE", "jobType": "JOB"}}
	}
	engine := map[string]any{"_producer": Producer, "_schemaURL": processingEngineFacetURL,
		"name": "Apache Beam Go SDK (direct)", "version": beamVersion()}
	event := func(typ string, pt string, runFacets map[string]any, outputs any) map[string]any {
		return map[string]any{
			"eventType": typ,
			"run":       map[string]any{"facets": runFacets},
			"job":       map[string]any{"namespace": "haade", "name": "bronze", "facets": jobFacets(pt)},
			"inputs":    []any{map[string]any{"namespace": "kafka://127.0.0.1:9092", "name": "fintech.debt.raw"}},
			"outputs":   outputs,
			"producer":  Producer,
			"schemaURL": SchemaURL,
		}
	}
	withErr := func(msg string) map[string]any {
		return map[string]any{"processing_engine": engine, "errorMessage": map[string]any{
			"_producer": Producer, "_schemaURL": errorMessageFacetURL, "message": msg, "programmingLanguage": "GO"}}
	}
	t.Setenv("HAADE_KAFKA_SASL_PASSWORD", "kafka-s3cret")
	cases := []struct {
		name      string
		streaming bool
		end       func(*Run)
		want      []map[string]any
	}{
		{"complete", false, func(r *Run) { r.Complete(context.Background(), done) }, []map[string]any{
			event("START", "BATCH", map[string]any{"processing_engine": engine}, wire(t, out)),
			event("COMPLETE", "BATCH", map[string]any{"processing_engine": engine}, wire(t, done)),
		}},
		{"fail, secrets redacted", true, func(r *Run) {
			r.Fail(context.Background(), errors.New("--catalog-uri: open postgres://haade:pg-s3cret@db:5432/lakehouse: SASL kafka-s3cret refused"), nil)
		}, []map[string]any{
			event("START", "STREAMING", map[string]any{"processing_engine": engine}, wire(t, out)),
			event("FAIL", "STREAMING", withErr("--catalog-uri: open postgres://haade:xxxxx@db:5432/lakehouse: SASL xxxxx refused"), wire(t, out)),
		}},
		{"abort, and only one end", true, func(r *Run) {
			r.Abort(context.Background(), nil)
			r.Complete(context.Background(), done)
		}, []map[string]any{
			event("START", "STREAMING", map[string]any{"processing_engine": engine}, wire(t, out)),
			event("ABORT", "STREAMING", map[string]any{"processing_engine": engine}, wire(t, out)),
		}},
		{"running (detached)", false, func(r *Run) { r.Running(context.Background()) }, []map[string]any{
			event("START", "BATCH", map[string]any{"processing_engine": engine}, wire(t, out)),
			event("RUNNING", "BATCH", map[string]any{"processing_engine": engine}, wire(t, out)),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.ndjson")
			em, err := Open("file://" + path)
			if err != nil {
				t.Fatal(err)
			}
			r := em.Start(context.Background(), Job{Name: "bronze", Streaming: tc.streaming, Runner: "direct"}, []InputDataset{kafka}, out)
			tc.end(r)
			if err := em.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := readEvents(t, path)
			checkRunIDs(t, got)
			if diff := cmp.Diff(wire(t, tc.want), wire(t, got)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// Each run has its own id; a file is appended to, never truncated.
func TestRunsAppendWithTheirOwnIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.ndjson")
	for range 2 {
		em, err := Open("file://" + path)
		if err != nil {
			t.Fatal(err)
		}
		em.Start(context.Background(), Job{Name: "gold"}, nil, nil).Complete(context.Background(), nil)
		em.Close(context.Background())
	}
	evs := readEvents(t, path)
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	id := func(i int) string { return evs[i]["run"].(map[string]any)["runId"].(string) }
	if id(0) != id(1) || id(2) != id(3) || id(0) == id(2) {
		t.Errorf("run ids %s %s %s %s: want two runs of two events", id(0), id(1), id(2), id(3))
	}
	if got := wire(t, evs[0]["inputs"]); !cmp.Equal(got, []any{}) {
		t.Errorf("inputs %v, want [] (never null)", got)
	}
}

// Lineage off: Open("") gives nil, and nil emitters, runs and commands do
// nothing.
func TestOff(t *testing.T) {
	em, err := Open("")
	if err != nil || em != nil {
		t.Fatalf("Open(\"\") = %v, %v; want nil, nil", em, err)
	}
	r := em.Start(context.Background(), Job{Name: "x"}, nil, nil)
	r.Complete(context.Background(), nil)
	r.Fail(context.Background(), errors.New("x"), nil)
	if r.ID() != "" {
		t.Errorf("ID of a nil run = %q", r.ID())
	}
	c := &Command{Emitter: em}
	c.Start(context.Background())
	c.End(context.Background(), 1)
	if err := em.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestParseURL(t *testing.T) {
	cases := []struct {
		in     string
		ok     bool
		noEcho string // must not appear in the error
	}{
		{"", true, ""},
		{"file:///tmp/events.ndjson", true, ""},
		{"http://127.0.0.1:5000/api/v1/lineage", true, ""},
		{"https://marquez.example/api/v1/lineage", true, ""},
		{"file://relative/events.ndjson", false, ""},
		{"file:///tmp/", false, ""},
		{"/tmp/events.ndjson", false, ""},
		{"kafka://broker:9092/lineage", false, ""},
		{"http:///api/v1/lineage", false, ""},
		{"http://user:t0ken@[::1:80/x", false, "t0ken"},
	}
	for _, tc := range cases {
		_, err := ParseURL(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseURL(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrURL) {
			t.Errorf("ParseURL(%q) = %v, want ErrURL", tc.in, err)
		}
		if tc.noEcho != "" && err != nil && strings.Contains(err.Error(), tc.noEcho) {
			t.Errorf("ParseURL(%q) = %v: shows the token", tc.in, err)
		}
	}
	if _, err := Open("file:///no/such/dir/events.ndjson"); !errors.Is(err, ErrURL) {
		t.Errorf("Open of a file in a missing directory = %v, want ErrURL", err)
	}
}

func TestKafkaTopicNaming(t *testing.T) {
	for _, tc := range []struct {
		brokers []string
		want    string
	}{
		{[]string{"b1:9093", "b2:9093"}, "kafka://b1:9093"},
		{[]string{"broker"}, "kafka://broker:9092"},
		{nil, "kafka://"},
	} {
		if got := KafkaTopic(tc.brokers, "t"); got.Namespace != tc.want || got.Name != "t" {
			t.Errorf("KafkaTopic(%v) = %+v, want namespace %q", tc.brokers, got, tc.want)
		}
	}
}
