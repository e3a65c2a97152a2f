//go:build monitoring

package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/k8s/monitoring"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/parse/event"
	sampleevents "github.com/haade/haade/transforms/sample"
)

const (
	topic = "fintech.debt.raw"
	table = "lakehouse.bronze_events"
	// promVersion is the module version prometheus.sh builds by default.
	promVersion = "v0.303.0"
)

// TestPrometheusScrapesBronze runs a real Prometheus (built by prometheus.sh)
// against a real bronze process, with the alert rules of k8s/monitoring as
// they are deployed (the groups of both PrometheusRules, thresholds
// unchanged), and reads everything back through Prometheus's HTTP API:
//
//  1. bronze streams from the demo's in-process Kafka (io/kafkaio/embedded;
//     the demo itself is a bounded run that exits within seconds, too soon to
//     be scraped), fed by a steady producer, into a SQLite catalog and a
//     warehouse under the test's temporary folder, serving /metrics;
//  2. Prometheus scrapes it every second and evaluates the rules every
//     second; the test waits until the commit, rows, Kafka read, lag and
//     freshness series are in Prometheus, with commits climbing, and until
//     the rule group has been evaluated with HaadeNoCommit inactive;
//  3. bronze is stopped (SIGTERM: it commits its last window and exits 0);
//     the target goes down, haade_seconds_since_last_commit goes absent, and
//     HaadeNoCommit goes pending and then firing through its
//     absent_over_time branch: 2 minutes without the series, then its
//     `for: 1m`, so about 3 minutes after the stop.
//
// Every wait polls the API until its condition holds or its deadline passes.
func TestPrometheusScrapesBronze(t *testing.T) {
	prom := prometheusBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// bronze, built from this tree.
	bronzeBin := filepath.Join(dir, "bronze")
	build := exec.Command("go", "build", "-o", bronzeBin, "./pipelines/bronze")
	build.Dir = cmdtest.MustRepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./pipelines/bronze: %v\n%s", err, out)
	}

	// The demo's in-process Kafka, and a producer of sample events (about 1%
	// malformed) that keeps every commit window non-empty.
	kafka, err := embedded.Start(topic, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer kafka.Close()
	produced := make(chan error, 1)
	go func() {
		for i := uint64(1); ; i++ {
			if err := embedded.Produce(ctx, kafka.Brokers(), topic, sampleevents.Sample(200, i, 0.01, event.MalformedCorpus)); err != nil {
				produced <- err
				return
			}
			select {
			case <-ctx.Done():
				produced <- nil
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()

	metricsAddr := freeAddr(t)
	bronzeLog, err := os.Create(filepath.Join(dir, "bronze.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer bronzeLog.Close()
	bronze := exec.Command(bronzeBin, "--runner=direct",
		"--brokers="+strings.Join(kafka.Brokers(), ","), "--topic="+topic,
		"--catalog-uri="+filepath.Join(dir, "catalog.db"), "--warehouse="+filepath.Join(dir, "warehouse"),
		"--commit-interval=2s", "--metrics-addr="+metricsAddr, "--kafka-readers=2")
	bronze.Stdout, bronze.Stderr = bronzeLog, bronzeLog
	bronze.Env = os.Environ()
	if err := bronze.Start(); err != nil {
		t.Fatal(err)
	}
	bronzeDone := make(chan error, 1)
	go func() { bronzeDone <- bronze.Wait() }()
	defer func() {
		if bronze.ProcessState == nil {
			_ = bronze.Process.Kill()
			<-bronzeDone
		}
		if t.Failed() {
			b, _ := os.ReadFile(bronzeLog.Name())
			t.Logf("bronze's log:\n%s", tail(b, 40))
		}
	}()

	// Prometheus, with the rules as deployed and bronze as its one target.
	writeRules(t, filepath.Join(dir, "haade-rules.yaml"))
	promAddr := freeAddr(t)
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [haade-rules.yaml]
scrape_configs:
  - job_name: bronze
    static_configs:
      - targets: [%q]
`, metricsAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	promLog, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer promLog.Close()
	p := exec.Command(prom, "--config.file=prometheus.yml", "--storage.tsdb.path=data",
		"--web.listen-address="+promAddr, "--log.level=info")
	p.Dir = dir
	p.Stdout, p.Stderr = promLog, promLog
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	promDone := make(chan error, 1)
	go func() { promDone <- p.Wait() }()
	defer func() {
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case <-promDone:
		case <-time.After(30 * time.Second):
			_ = p.Process.Kill()
			<-promDone
		}
		if t.Failed() {
			b, _ := os.ReadFile(promLog.Name())
			t.Logf("prometheus's log:\n%s", tail(b, 40))
		}
	}()
	api := &promAPI{t: t, base: "http://" + promAddr}
	waitFor(t, 60*time.Second, "Prometheus ready", func() (bool, string) {
		select {
		case err := <-promDone:
			t.Fatalf("prometheus exited: %v", err)
		default:
		}
		code, body := api.get("/-/ready")
		return code == 200, fmt.Sprintf("/-/ready: %d %s", code, strings.TrimSpace(body))
	})
	if v := api.buildVersion(); v != "" {
		t.Logf("Prometheus %s on %s, bronze's /metrics on %s", v, promAddr, metricsAddr)
	}

	// 2. HAADE's series, through Prometheus.
	series := []struct{ what, query string }{
		{"the target is up", `up{job="bronze"} == 1`},
		{"committed windows", `haade_commits_total{table="` + table + `",outcome="committed"} > 0`},
		{"rows written", `haade_rows_written_total{table="` + table + `"} > 0`},
		{"Kafka records read", `sum(haade_kafka_records_read_total{topic="` + topic + `"}) > 0`},
		{"consumer lag, one series per partition", `count(haade_kafka_consumer_lag{topic="` + topic + `"}) == 4`},
		{"freshness of commits", `haade_freshness_seconds_count{table="` + table + `"} > 0`},
		{"a recent commit", `haade_seconds_since_last_commit{table="` + table + `"} < 30`},
		{"the dead-letter table gets the malformed events", `haade_rows_written_total{table="lakehouse.bronze_events_dlq"} > 0`},
	}
	for _, s := range series {
		waitFor(t, 120*time.Second, s.what, func() (bool, string) {
			checkAlive(t, bronzeDone, "bronze")
			v := api.query(s.query)
			return len(v) > 0, fmt.Sprintf("%s: %v", s.query, v)
		})
		t.Logf("%s: %s = %v", s.what, s.query, api.query(s.query))
	}
	// Commits go on: the counter climbs between two looks, and Prometheus
	// computes a rate from it.
	first := api.scalar(`sum(haade_commits_total{table="` + table + `",outcome="committed"})`)
	waitFor(t, 60*time.Second, "commits climbing", func() (bool, string) {
		checkAlive(t, bronzeDone, "bronze")
		now := api.scalar(`sum(haade_commits_total{table="` + table + `",outcome="committed"})`)
		return now > first, fmt.Sprintf("committed windows %v, then %v", first, now)
	})
	waitFor(t, 60*time.Second, "a commit rate", func() (bool, string) {
		v := api.query(`sum(rate(haade_commits_total{table="` + table + `",outcome="committed"}[10s])) > 0`)
		return len(v) > 0, fmt.Sprint(v)
	})
	t.Logf("rows/s into %s over 10s: %v", table, api.query(`sum(rate(haade_rows_written_total{table="`+table+`"}[10s]))`))
	t.Logf("p99 freshness over 30s: %v", api.query(`histogram_quantile(0.99, sum by (le) (rate(haade_freshness_seconds_bucket{table="`+table+`"}[30s])))`))

	// The rules load, evaluate without error, and HaadeNoCommit stays
	// inactive while bronze commits.
	waitFor(t, 60*time.Second, "HaadeNoCommit evaluated, healthy and inactive", func() (bool, string) {
		r, ok := api.rule("HaadeNoCommit")
		if !ok {
			return false, "no rule HaadeNoCommit in /api/v1/rules"
		}
		return r.Health == "ok" && r.State == "inactive" && !r.LastEvaluation.IsZero() && r.LastEvaluation.Year() > 2000,
			fmt.Sprintf("%+v", r)
	})
	for _, a := range api.alerts() {
		if a.Labels["alertname"] == "HaadeNoCommit" {
			t.Fatalf("HaadeNoCommit is %s while bronze commits: %+v", a.State, a)
		}
	}

	// 3. Stop bronze; the alert must go firing.
	if err := bronze.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bronzeDone:
		if err != nil {
			t.Fatalf("bronze after SIGTERM: %v (want exit 0)", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("bronze did not exit within 60s of SIGTERM")
	}
	stopped := time.Now()
	t.Logf("bronze stopped (exit 0) at %s", stopped.UTC().Format(time.TimeOnly))
	waitFor(t, 30*time.Second, "the target down", func() (bool, string) {
		v := api.query(`up{job="bronze"} == 0`)
		return len(v) > 0, fmt.Sprint(api.query(`up{job="bronze"}`))
	})
	var pendingAt time.Time
	waitFor(t, 6*time.Minute, "HaadeNoCommit firing", func() (bool, string) {
		for _, a := range api.alerts() {
			if a.Labels["alertname"] != "HaadeNoCommit" {
				continue
			}
			if a.State == "pending" && pendingAt.IsZero() {
				pendingAt = time.Now()
				t.Logf("HaadeNoCommit pending %s after the stop: %+v", pendingAt.Sub(stopped).Round(time.Second), a)
			}
			if a.State == "firing" {
				t.Logf("HaadeNoCommit firing %s after the stop: %+v", time.Since(stopped).Round(time.Second), a)
				if a.Labels["table"] != table || a.Labels["severity"] != "critical" {
					t.Errorf("HaadeNoCommit's labels: %v, want table=%s and severity=critical", a.Labels, table)
				}
				return true, ""
			}
		}
		return false, "not firing yet"
	})
	// The absent branch, not the threshold: the series is gone, and the
	// alert's value is absent_over_time's 1. It cannot fire before its
	// 2-minute window and 1-minute hold have passed since the last sample.
	if took := time.Since(stopped); took < 2*time.Minute+45*time.Second {
		t.Errorf("HaadeNoCommit fired %s after the stop; the rule (absent for 2m, for 1m) needs about 3m", took)
	}
	if pendingAt.IsZero() {
		t.Error("HaadeNoCommit was never seen pending before firing")
	}
	if v := api.query(`haade_seconds_since_last_commit{table="` + table + `"}`); len(v) != 0 {
		t.Errorf("haade_seconds_since_last_commit still present after the stop: %v", v)
	}
	cancel()
	if err := <-produced; err != nil && ctx.Err() == nil {
		t.Errorf("producer: %v", err)
	}
}

// prometheusBinary is HAADE_PROMETHEUS, or the one prometheus.sh builds; the
// test is skipped without it.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	return cachedBinary(t, "HAADE_PROMETHEUS", "prometheus-"+promVersion, "prometheus")
}

// writeRules writes the rule groups of k8s/monitoring's PrometheusRules as
// one plain Prometheus rules file, as the operator hands them to Prometheus.
func writeRules(t *testing.T, path string) {
	t.Helper()
	out, err := monitoring.RuleGroups(filepath.Join(cmdtest.MustRepoRoot(t), "k8s", "monitoring"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func checkAlive(t *testing.T, done chan error, name string) {
	t.Helper()
	select {
	case err := <-done:
		done <- err
		t.Fatalf("%s exited: %v", name, err)
	default:
	}
}

// waitFor waits (testing/wait) until cond holds, or fails the test at the
// deadline with what and cond's last word.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	wait.For(t, timeout, func() error {
		if ok, why := cond(); !ok {
			return fmt.Errorf("%s; last: %s", what, why)
		}
		return nil
	})
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// promAPI is the little of Prometheus's HTTP API the test reads.
type promAPI struct {
	t    *testing.T
	base string
}

func (a *promAPI) get(path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(a.base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (a *promAPI) data(path string, into any) {
	a.t.Helper()
	code, body := a.get(path)
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil || code != 200 || env.Status != "success" {
		a.t.Fatalf("GET %s: %d %s (%v)", path, code, tail([]byte(body), 5), err)
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		a.t.Fatalf("GET %s: %v", path, err)
	}
}

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) String() string { return fmt.Sprintf("%v=%v", s.Metric, s.Value[1]) }

// query runs an instant query and returns its vector.
func (a *promAPI) query(q string) []sample {
	a.t.Helper()
	var d struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	}
	a.data("/api/v1/query?query="+url.QueryEscape(q), &d)
	if d.ResultType != "vector" {
		a.t.Fatalf("query %s: result type %s, want vector", q, d.ResultType)
	}
	return d.Result
}

// scalar is the value of a query that gives one sample, or 0 for none.
func (a *promAPI) scalar(q string) float64 {
	a.t.Helper()
	v := a.query(q)
	if len(v) == 0 {
		return 0
	}
	s, _ := v[0].Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		a.t.Fatalf("query %s: value %q: %v", q, s, err)
	}
	return f
}

type alert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
	Value    string            `json:"value"`
}

func (a *promAPI) alerts() []alert {
	a.t.Helper()
	var d struct {
		Alerts []alert `json:"alerts"`
	}
	a.data("/api/v1/alerts", &d)
	return d.Alerts
}

type rule struct {
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Health         string    `json:"health"`
	State          string    `json:"state"`
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

func (a *promAPI) rule(name string) (rule, bool) {
	a.t.Helper()
	var d struct {
		Groups []struct {
			Rules []rule `json:"rules"`
		} `json:"groups"`
	}
	a.data("/api/v1/rules", &d)
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			if r.Name == name {
				return r, true
			}
		}
	}
	return rule{}, false
}

func (a *promAPI) buildVersion() string {
	var d struct {
		Version string `json:"version"`
	}
	a.data("/api/v1/status/buildinfo", &d)
	return d.Version
}
