//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// registryURL is Apicurio's Confluent-compatible API (testing/services/registry.sh).
const registryURL = "http://127.0.0.1:8091/apis/ccompat/v7"

// registerSchema registers a JSON Schema under subject in the real registry
// and returns its id.
func registerSchema(t *testing.T, subject, text string) int {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(registryURL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: text, Type: sr.TypeJSON})
	if err != nil {
		t.Fatalf("registering a schema under %s: %v", subject, err)
	}
	return s.ID
}

func repoSchema(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "schemas/fintech.debt.raw-value.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// schemaV2 is the repository's schema plus an optional member "region".
func schemaV2(t *testing.T) string {
	v1 := repoSchema(t)
	v2 := strings.Replace(v1, `"timestamp": {"type": "string", "format": "date-time", "description": "when it happened, RFC 3339"}`,
		`"timestamp": {"type": "string", "format": "date-time", "description": "when it happened, RFC 3339"},
    "region": {"type": "string", "description": "market region, optional (version 2)"}`, 1)
	if v2 == v1 {
		t.Fatal("schemaV2: the repository's schema changed shape; update the test")
	}
	return v2
}

// produceValues sends values to the test's topic with franz-go (kcat's
// delimiter cannot carry the wire format's zero bytes), waiting for acks.
func (e *env) produceValues(values [][]byte) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(e.topic))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Value: v}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		e.t.Fatalf("producing %d values: %v", len(values), err)
	}
}

func wireEvent(id int, json string) []byte { return append(registryio.AppendWire(nil, id), json...) }

func goodEvent(i int) string {
	return fmt.Sprintf(`{"source": "news", "title": "Debt market update %d", "timestamp": "2026-05-19T10:00:00Z"}`, i)
}

// deadReasons maps each dead letter's payload to its reason, and counts rows.
func (e *env) outcome() (rows int, reasons map[string]string) {
	tb := e.scan(e.table, e.dlq)
	reasons = map[string]string{}
	for _, d := range tb.dlq {
		reasons[string(d.Payload)] = d.Error
	}
	return len(tb.events), reasons
}

// TestSchemaRegistry: bronze against a real Apicurio Registry and a real
// Kafka. Good and bad events, plain JSON and the wire format (written by
// pipelines/produce), checked against the registered JSON Schema.
func TestSchemaRegistry(t *testing.T) {
	e := newEnv(t, "registry", 4)
	services(t, "registry")
	subject := e.topic + "-value"
	id := registerSchema(t, subject, repoSchema(t))

	// 500 wire-format events from the real producer, which looks the id up.
	bins, err := (cmdtest.Builder{Nice: 10}).Build(e.dir, filepath.Join(repoRoot, "pipelines/produce"))
	if err != nil {
		t.Fatal(err)
	}
	produceBin := bins[0]
	cmd := exec.Command(produceBin, "--brokers="+brokers, "--topic="+e.topic, "--count=500", "--schema-registry="+registryURL,
		"--register-schema="+filepath.Join(repoRoot, "schemas/fintech.debt.raw-value.json"), "--wire-format")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "sent 500 events") {
		t.Fatalf("produce --wire-format: %v\n%s", err, out)
	}

	bad := map[string]string{
		string(wireEvent(id, `{"source": "", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`)):   "schema: schema id " + fmt.Sprint(id) + ": /source minLength: ",
		`{"source": "news", "timestamp": "2026-05-19T10:00:00Z"}`:                                    "schema: schema id " + fmt.Sprint(id) + ": / required: missing property 'title'",
		string(wireEvent(id, `{"source": "news", "title": 7, "timestamp": "2026-05-19T10:00:00Z"}`)): "wrong_type: ",
		string([]byte{0, 0, 1}): "wire_format: ",
	}
	var values [][]byte
	for i := range 100 {
		values = append(values, []byte(goodEvent(i)))            // plain JSON
		values = append(values, wireEvent(id, goodEvent(i+100))) // wire format
	}
	for v := range bad {
		values = append(values, []byte(v))
	}
	e.produceValues(values)

	e.runBounded(5*time.Minute, "--schema-registry="+registryURL, "--schema-subject="+subject, "--validate-schema")
	rows, reasons := e.outcome()
	if rows != 700 {
		t.Errorf("bronze holds %d rows, want 700 (500 from produce, 200 good)", rows)
	}
	got := map[string]string{}
	for p, r := range reasons {
		want := bad[p]
		got[p] = r[:min(len(r), len(want))]
	}
	if d := cmp.Diff(bad, got); d != "" {
		t.Errorf("dead letters by payload (-want +got):\n%s", d)
	}

	// An id the registry never learns: after --schema-registry-wait bronze
	// fails loudly, and the record is neither a row nor a dead letter.
	e.produceValues([][]byte{wireEvent(999_999, goodEvent(0))})
	p := e.startBronze("--bounded", "--schema-registry="+registryURL, "--schema-subject="+subject, "--validate-schema", "--schema-registry-wait=3s")
	if err := p.wait(3 * time.Minute); err == nil {
		t.Fatalf("bronze exited 0 with a schema id the registry does not know\n%s", cmdtest.TailFile(p.log, 20))
	}
	if countLines(p.log, "schema id unknown to the registry") == 0 {
		t.Errorf("bronze's failure does not say the schema id is unknown:\n%s", cmdtest.TailFile(p.log, 20))
	}
	if rows2, reasons2 := e.outcome(); rows2 != rows || len(reasons2) != len(reasons) {
		t.Errorf("after the failed run: %d rows and %d dead letters, want %d and %d (nothing committed)", rows2, len(reasons2), rows, len(reasons))
	}
}

// TestSchemaRegistryOutage: the registry stops mid-stream while events
// whose schema id it has not seen keep arriving. Bronze waits: nothing is
// dead-lettered, nothing lost, and once the registry is back (empty: its
// storage is in memory) and the schemas are registered again, every event
// lands. The registry side of evolution (version 2 adds an optional member)
// is read from the real registry too.
func TestSchemaRegistryOutage(t *testing.T) {
	e := newEnv(t, "registryout", 4)
	services(t, "registry")
	subject := e.topic + "-value"
	// A fresh registry numbers contents from 1: restart it so the ids below
	// are the ones it gives again after the outage.
	mustScript(t, "registry", "restart")
	id1 := registerSchema(t, subject, repoSchema(t))

	p := e.startBronze("--schema-registry="+registryURL, "--schema-subject="+subject, "--validate-schema", "--schema-registry-wait=10m")
	var first [][]byte
	for i := range 300 {
		first = append(first, wireEvent(id1, goodEvent(i)))
	}
	e.produceValues(first)
	e.waitRows(p, 300, 3*time.Minute)

	mustScript(t, "registry", "stop")
	// Version 2's id: the next content id, which the registry will give it.
	id2 := id1 + 1
	var second [][]byte
	for i := range 300 {
		second = append(second, wireEvent(id2, `{"source": "news", "title": "t", "timestamp": "2026-05-19T10:00:00Z", "region": "eu"}`))
		second = append(second, []byte(goodEvent(1000+i))) // plain JSON: checked against the cached latest version
	}
	outageStart := time.Now()
	e.produceValues(second)
	time.Sleep(20 * time.Second)
	if !p.running() {
		t.Fatalf("bronze exited while the registry was away: %v\n%s", p.err, cmdtest.TailFile(p.log, 30))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	n, err := e.counts(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if n >= 900 {
		t.Fatalf("the tables hold %d rows while the registry is away; the events of unknown id %d cannot have been checked", n, id2)
	}
	_, reasons := e.outcome()
	if len(reasons) != 0 {
		t.Fatalf("dead letters while the registry was away: %v", reasons)
	}

	mustScript(t, "registry", "start")
	if got := registerSchema(t, subject, repoSchema(t)); got != id1 {
		t.Fatalf("the restarted registry gave version 1 id %d, want %d", got, id1)
	}
	if got := registerSchema(t, subject, schemaV2(t)); got != id2 {
		t.Fatalf("version 2 got id %d, want %d", got, id2)
	}
	e.waitRows(p, 900, 5*time.Minute)
	t.Logf("registry away and back: all 900 rows %v after the outage began", time.Since(outageStart).Round(time.Second))
	e.terminate(p, 2*time.Minute)
	rows, reasons := e.outcome()
	if rows != 900 || len(reasons) != 0 {
		t.Fatalf("after the outage: %d rows and dead letters %v; want 900 rows and none", rows, reasons)
	}
	if c := countLines(p.log, "schema registry: retrying"); c == 0 {
		t.Errorf("bronze never logged that it was waiting for the registry")
	}

	// The registry side of promotion: version 2 adds region, a string.
	res, err := registryio.NewResolver(registryio.Config{URL: registryURL, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := registryio.NewMembersBetween(context.Background(), res, subject, 1, -1)
	if err != nil {
		t.Fatal(err)
	}
	var promote []string
	for _, m := range ms {
		promote = append(promote, m.Promote())
	}
	sort.Strings(promote)
	if d := cmp.Diff([]string{"region:string"}, promote); d != "" {
		t.Errorf("members version 2 adds (-want +got):\n%s", d)
	}
}
