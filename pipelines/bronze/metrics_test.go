package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/runners/obs"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape sums each metric family of a /metrics page over its labels.
func scrape(t *testing.T, url string) (map[string]float64, error) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				out[name] += m.Counter.GetValue()
			case m.Gauge != nil:
				out[name] += m.Gauge.GetValue()
			}
		}
	}
	return out, nil
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Scrape /metrics while a streaming run works through a backlog: records
// read reach what was produced, bronze rows plus dead letters equal records
// read, and the lag reaches 0.
func TestMetricsDuringRun(t *testing.T) {
	e := newEnv(t, 4)
	e.produce(sample(3000, 11))
	before, _ := baseline()
	addr := freePort(t)
	args := []string{"--brokers=" + e.cfg.Kafka.Brokers[0], "--catalog-uri=" + e.cfg.Catalog.URI,
		"--warehouse=" + e.cfg.Catalog.Warehouse, "--commit-interval=1s", "--metrics-addr=" + addr}
	var out, errb cmdtest.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, func(string) string { return "" }, &out, &errb) }()

	want := float64(e.count())
	var last map[string]float64
	wait.For(t, 60*time.Second, func() error {
		select {
		case code := <-done:
			t.Fatalf("run returned %d early; stderr:\n%s", code, errb.String())
		default:
		}
		m, err := scrape(t, "http://"+addr+"/metrics")
		if err != nil {
			return err
		}
		last = m
		read := m["haade_kafka_records_read_total"] - before["haade_kafka_records_read_total"]
		parsed := m["haade_records_parsed_total"] - before["haade_records_parsed_total"]
		dead := m["haade_dead_letters_total"] - before["haade_dead_letters_total"]
		committed := m["haade_commits_total"] > 0
		if read == want && parsed+dead == read && m["haade_kafka_consumer_lag"] == 0 && committed {
			return nil
		}
		return fmt.Errorf("metrics never settled: %v", pick(m))
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: %v %v", path, resp, err)
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	e.checkExactlyOnce(badSet())
	for _, name := range []string{"haade_seconds_since_last_commit", "haade_last_commit_timestamp_seconds", "haade_data_files_written_total", "haade_rows_written_total"} {
		if last[name] == 0 {
			t.Errorf("metric %s missing or zero: %v", name, pick(last))
		}
	}
}

func baseline() (map[string]float64, error) {
	s := obs.Snapshot()
	return map[string]float64{"haade_kafka_records_read_total": s.Read, "haade_records_parsed_total": s.Parsed,
		"haade_dead_letters_total": s.DeadLetters}, nil
}

func pick(m map[string]float64) string {
	var b strings.Builder
	for k, v := range m {
		if strings.HasPrefix(k, "haade_") {
			fmt.Fprintf(&b, "%s=%v ", k, v)
		}
	}
	return b.String()
}

// Metric names follow Prometheus conventions (promlint).
func TestMetricNamesLint(t *testing.T) {
	problems, err := testutil.GatherAndLint(obs.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "haade_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}
