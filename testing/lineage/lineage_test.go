//go:build e2e

// Package lineage tests the OpenLineage events of the medallion flow: it
// runs bronze (the embedded demo: an in-process Kafka), silver and gold as
// processes of their own with --lineage, checks the events they wrote
// against the tables, and validates them with PyPI's openlineage-python
// (testing/services/openlineage.sh installs it; validate.py says how).
package lineage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	icemaint "github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
)

var bronze, silver, gold, maintain string

func TestMain(m *testing.M) {
	bins, done := cmdtest.BuildTemp("github.com/haade/haade/pipelines/bronze", "github.com/haade/haade/pipelines/silver",
		"github.com/haade/haade/pipelines/gold", "github.com/haade/haade/pipelines/maintain")
	bronze, silver, gold, maintain = bins[0], bins[1], bins[2], bins[3]
	code := m.Run()
	done()
	os.Exit(code)
}

// lakehouse is a temporary catalog and warehouse, and the flags that name it.
type lakehouse struct {
	dir  string
	cfg  icebergio.CatalogConfig
	args []string
}

func newLakehouse(t *testing.T) *lakehouse {
	dir := t.TempDir()
	cfg := icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	return &lakehouse{dir: dir, cfg: cfg, args: []string{"--catalog-uri=" + cfg.URI, "--warehouse=" + cfg.Warehouse}}
}

// run runs a pipeline binary and returns its exit code and stderr.
func run(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb cmdtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", filepath.Base(bin), err)
	}
	return code, errb.String()
}

func readEvents(t *testing.T, path string) []lineage.RunEvent {
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
			t.Fatalf("%s: %v", path, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// byJob groups the events by job name, in file order.
func byJob(evs []lineage.RunEvent) map[string][]lineage.RunEvent {
	out := map[string][]lineage.RunEvent{}
	for _, ev := range evs {
		out[ev.Job.Name] = append(out[ev.Job.Name], ev)
	}
	return out
}

// names lists "namespace name" of datasets.
func names[D lineage.InputDataset | lineage.OutputDataset](ds []D) []string {
	var out []string
	for _, d := range ds {
		switch d := any(d).(type) {
		case lineage.InputDataset:
			out = append(out, d.Namespace+" "+d.Name)
		case lineage.OutputDataset:
			out = append(out, d.Namespace+" "+d.Name)
		}
	}
	return out
}

// facet decodes one facet of a facet map into v.
func facet(t *testing.T, facets map[string]any, name string, v any) {
	t.Helper()
	b, err := json.Marshal(facets[name])
	if err != nil || facets[name] == nil {
		t.Fatalf("no %s facet in %v", name, facets)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// tableSnapshots returns the snapshot ids that pipeline made in table
// ident, oldest first, and the rows they added.
func tableSnapshots(t *testing.T, cat catalog.Catalog, ident, pipeline string) (ids []int64, rows int64) {
	t.Helper()
	for _, s := range icebergtest.Snapshots(t, cat, ident) {
		if s.Summary[icebergio.SummaryPipeline] == pipeline {
			ids = append(ids, s.ID)
			n, _ := strconv.ParseInt(s.Summary["added-records"], 10, 64)
			rows += n
		}
	}
	return ids, rows
}

// The medallion flow, each pipeline in a process of its own with
// --lineage=file://: one START and one COMPLETE per run, the inputs and
// outputs named as OpenLineage's naming says, and on COMPLETE the snapshot
// ids and row counts the tables hold. Then openlineage-python checks them.
func TestMedallionLineage(t *testing.T) {
	lh := newLakehouse(t)
	events := filepath.Join(lh.dir, "events.ndjson")
	flag := "--lineage=file://" + events

	if code, errs := run(t, bronze, nil, append(lh.args, flag, "--demo", "--metrics-addr=", "--demo-events=2000")...); code != 0 {
		t.Fatalf("bronze: exit %d\n%s", code, errs)
	}
	if code, errs := run(t, silver, nil, append(lh.args, flag, "--bounded")...); code != 0 {
		t.Fatalf("silver: exit %d\n%s", code, errs)
	}
	if code, errs := run(t, gold, nil, append(lh.args, flag)...); code != 0 {
		t.Fatalf("gold: exit %d\n%s", code, errs)
	}

	ctx := context.Background()
	cat, err := lh.cfg.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wh, _ := lh.cfg.WarehouseURL()
	jobs := byJob(readEvents(t, events))
	want := []struct {
		job           string
		inputs        []string // prefix "kafka://" is checked alone: the demo's port is new each run
		outputs       []string
		schemaColumns []string // the first output's first columns
	}{
		{"bronze", []string{"kafka:// fintech.debt.raw"}, []string{"lakehouse.bronze_events", "lakehouse.bronze_events_dlq"}, []string{"source", "title", "timestamp"}},
		{"silver", []string{wh + " lakehouse.bronze_events"}, []string{"lakehouse.silver_events", "lakehouse.silver_rejects"}, []string{"source", "title", "timestamp"}},
		{"gold", []string{wh + " lakehouse.silver_events"}, []string{"lakehouse.gold_source_daily", "lakehouse.gold_trending_terms"}, []string{"day", "source", "events"}},
	}
	var bronzeRows int64
	for _, w := range want {
		t.Run(w.job, func(t *testing.T) {
			evs := jobs[w.job]
			if len(evs) != 2 || evs[0].EventType != lineage.Start || evs[1].EventType != lineage.Complete {
				t.Fatalf("%d events %v, want START then COMPLETE", len(evs), evs)
			}
			if evs[0].Run.RunID == "" || evs[0].Run.RunID != evs[1].Run.RunID {
				t.Errorf("run ids %q and %q: want one run", evs[0].Run.RunID, evs[1].Run.RunID)
			}
			for _, ev := range evs {
				in := names(ev.Inputs)
				if w.job == "bronze" && len(in) == 1 && strings.HasPrefix(in[0], "kafka://127.0.0.1:") {
					in = []string{"kafka:// " + strings.SplitN(in[0], " ", 2)[1]}
				}
				if diff := cmp.Diff(w.inputs, in); diff != "" {
					t.Errorf("%s inputs (-want +got):\n%s", ev.EventType, diff)
				}
				var outs []string
				for _, o := range w.outputs {
					outs = append(outs, wh+" "+o)
				}
				if diff := cmp.Diff(outs, names(ev.Outputs)); diff != "" {
					t.Errorf("%s outputs (-want +got):\n%s", ev.EventType, diff)
				}
				var sf lineage.SchemaFacet
				facet(t, ev.Outputs[0].Facets, "schema", &sf)
				var cols []string
				for _, f := range sf.Fields[:len(w.schemaColumns)] {
					cols = append(cols, f.Name)
				}
				if diff := cmp.Diff(w.schemaColumns, cols); diff != "" {
					t.Errorf("%s schema facet (-want +got):\n%s", ev.EventType, diff)
				}
			}
			for _, o := range evs[1].Outputs {
				var snaps lineage.SnapshotsFacet
				var stats lineage.OutputStatistics
				facet(t, o.OutputFacets, "haade_snapshots", &snaps)
				facet(t, o.OutputFacets, "outputStatistics", &stats)
				ids, rows := tableSnapshots(t, cat, o.Name, w.job)
				var got []int64
				for _, s := range snaps.Snapshots {
					got = append(got, s.SnapshotID)
				}
				if diff := cmp.Diff(ids, got); diff != "" {
					t.Errorf("%s: snapshot ids (-table +event):\n%s", o.Name, diff)
				}
				cur := icebergtest.Load(t, cat, o.Name).CurrentSnapshot()
				if cur == nil || snaps.CurrentSnapshotID != cur.SnapshotID {
					t.Errorf("%s: currentSnapshotId %d, want the table's %v", o.Name, snaps.CurrentSnapshotID, cur)
				}
				if stats.RowCount != rows || (o.Name != "lakehouse.silver_rejects" && rows == 0) {
					t.Errorf("%s: outputStatistics.rowCount %d, want the %d rows its snapshots added (> 0)", o.Name, stats.RowCount, rows)
				}
				if stats.FileCount == 0 && rows > 0 || stats.Size == 0 && rows > 0 {
					t.Errorf("%s: outputStatistics %+v: files and bytes missing", o.Name, stats)
				}
				if w.job == "bronze" {
					bronzeRows += stats.RowCount
				}
			}
		})
	}
	if bronzeRows != 2001 {
		t.Errorf("bronze's COMPLETE counts %d rows in its two tables, want the 2001 records of the demo", bronzeRows)
	}
	validate(t, events)
}

// A run that fails emits START and FAIL, with the error, secrets masked;
// a malformed --lineage is one line naming the flag, exit 2, for every
// pipeline.
func TestFailAndBadFlag(t *testing.T) {
	lh := newLakehouse(t)
	events := filepath.Join(lh.dir, "events.ndjson")
	code, errs := run(t, bronze, []string{"HAADE_LINEAGE=file://" + events},
		"--brokers=127.0.0.1:1", "--metrics-addr=", "--catalog-uri=postgres://haade:s3cret@127.0.0.1:1/lakehouse", "--warehouse="+lh.cfg.Warehouse)
	if code != 2 {
		t.Fatalf("bronze against an unreachable catalog: exit %d, want 2\n%s", code, errs)
	}
	evs := readEvents(t, events)
	if len(evs) != 2 || evs[0].EventType != lineage.Start || evs[1].EventType != lineage.Fail || evs[0].Run.RunID != evs[1].Run.RunID {
		t.Fatalf("events %+v: want START then FAIL of one run", evs)
	}
	var em lineage.ErrorMessage
	facet(t, evs[1].Run.Facets, "errorMessage", &em)
	if !strings.Contains(em.Message, "--catalog-uri") || !strings.Contains(em.Message, "postgres://haade:xxxxx@127.0.0.1:1") {
		t.Errorf("FAIL message %q: want the catalog error, password masked", em.Message)
	}
	raw, _ := os.ReadFile(events)
	if strings.Contains(string(raw), "s3cret") {
		t.Errorf("the events show the catalog password:\n%s", raw)
	}
	validate(t, events)

	for _, bin := range []string{bronze, silver, gold} {
		for _, bad := range []string{"ftp://host/x", "file://relative/x", "http://user:t0ken@[::1:80/x", "file:///no/such/dir/events.ndjson"} {
			args := append(append([]string(nil), lh.args...), "--lineage="+bad)
			if bin == bronze {
				// Bronze with a catalog and no Kafka refuses --brokers
				// first; an unreachable broker isolates --lineage.
				args = append(args, "--brokers=127.0.0.1:1", "--metrics-addr=")
			}
			code, errs := run(t, bin, nil, args...)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--lineage") {
				t.Errorf("%s --lineage=%s: exit %d, stderr %q; want 2 and one line naming --lineage", filepath.Base(bin), bad, code, errs)
			}
			if strings.Contains(errs, "t0ken") {
				t.Errorf("%s --lineage=%s: stderr shows the token: %q", filepath.Base(bin), bad, errs)
			}
		}
	}
}

// The HTTP transport from a real pipeline: gold POSTs START and COMPLETE to
// an endpoint that refuses its first two requests.
func TestGoldPostsToHTTP(t *testing.T) {
	lh := newLakehouse(t)
	if code, errs := run(t, bronze, nil, append(lh.args, "--demo", "--metrics-addr=", "--demo-events=300")...); code != 0 {
		t.Fatalf("bronze: exit %d\n%s", code, errs)
	}
	if code, errs := run(t, silver, nil, append(lh.args, "--bounded")...); code != 0 {
		t.Fatalf("silver: exit %d\n%s", code, errs)
	}
	var mu sync.Mutex
	var got []lineage.RunEvent
	var bodies []string
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		var body json.RawMessage
		var ev lineage.RunEvent
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || json.Unmarshal(body, &ev) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		bodies = append(bodies, string(body))
		got = append(got, ev)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	code, errs := run(t, gold, []string{"HAADE_LINEAGE_API_KEY=k3y"}, append(lh.args, "--lineage="+srv.URL+"/api/v1/lineage")...)
	if code != 0 {
		t.Fatalf("gold: exit %d\n%s", code, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].EventType != lineage.Start || got[1].EventType != lineage.Complete || got[0].Run.RunID != got[1].Run.RunID {
		t.Fatalf("endpoint got %+v, want START then COMPLETE of one run", got)
	}
	if !strings.Contains(errs, "lineage endpoint not reachable; retrying") {
		t.Errorf("no warning about the refused requests; stderr:\n%s", errs)
	}
	path := filepath.Join(lh.dir, "posted.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(bodies, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	validate(t, path)
}

// Maintenance's table jobs: a compaction of three demo runs' files is one
// run of job "maintain" whose COMPLETE lists the replace snapshot it made,
// and none of bronze's.
func TestMaintainLineage(t *testing.T) {
	lh := newLakehouse(t)
	for range 3 {
		if code, errs := run(t, bronze, nil, append(lh.args, "--demo", "--metrics-addr=", "--demo-events=200")...); code != 0 {
			t.Fatalf("bronze: exit %d\n%s", code, errs)
		}
	}
	events := filepath.Join(lh.dir, "events.ndjson")
	code, errs := run(t, maintain, nil, append(lh.args, "--lineage=file://"+events, "--tables=lakehouse.bronze_events",
		"--actions=compact,rewrite-manifests", "--min-input-files=2")...)
	if code != 0 {
		t.Fatalf("maintain: exit %d\n%s", code, errs)
	}
	evs := readEvents(t, events)
	if len(evs) != 2 || evs[0].Job.Name != "maintain" || evs[0].EventType != lineage.Start || evs[1].EventType != lineage.Complete {
		t.Fatalf("events %+v: want START and COMPLETE of job maintain", evs)
	}
	cat, err := lh.cfg.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	var replaced bool
	for _, s := range icebergtest.Snapshots(t, cat, "lakehouse.bronze_events") {
		if s.Summary[icemaint.SummaryMaintenance] != "" {
			want = append(want, s.ID)
			replaced = replaced || s.Operation == "replace"
		}
	}
	if !replaced {
		t.Fatalf("maintenance made no replace snapshot (%v): nothing was compacted", want)
	}
	var snaps lineage.SnapshotsFacet
	facet(t, evs[1].Outputs[0].OutputFacets, "haade_snapshots", &snaps)
	var got []int64
	for _, s := range snaps.Snapshots {
		got = append(got, s.SnapshotID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("maintenance snapshots (-table +event):\n%s", diff)
	}
	validate(t, events)
}

// validate runs testing/lineage/validate.py (openlineage-python's model and
// jsonschema) over an events file, through testing/services/openlineage.sh,
// which installs the pinned packages into a venv under $HAADE_CACHE.
func validate(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the events cannot be checked with openlineage-python")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "testing/services/openlineage.sh"), "validate", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("openlineage.sh validate: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
	if !strings.Contains(string(out), "valid (openlineage-python") {
		t.Errorf("validate.py said:\n%s", out)
	}
}
