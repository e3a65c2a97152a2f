package kafkaio

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// gatherKgo registers Collectors() with a new registry, gathers it, and
// returns the value of every kgo_ counter and gauge, summed per family and
// client label, and the histograms' sample counts.
func gatherKgo(t *testing.T) map[string]map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err) // duplicate series from two clients would fail here
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			client := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "client" {
					client = l.GetValue()
				}
			}
			if out[mf.GetName()] == nil {
				out[mf.GetName()] = map[string]float64{}
			}
			out[mf.GetName()][client] += metricValue(m)
		}
	}
	return out
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// TestClientMetrics reads from kfake and checks that franz-go's own
// metrics (kprom) of the read's clients and of the admin client that
// planned it are served by Collectors(): connections, bytes read from the
// broker, fetched bytes per topic and request latencies, each > 0. Two runs
// make new clients with the same names: gathering must still succeed, with
// one series per client name.
func TestClientMetrics(t *testing.T) {
	cfg := startKafka(t, 2)
	cl := client(t, cfg)
	want := produce(t, cl, "m", map[int32]int{0: 30, 1: 12})
	for run := 0; run < 2; run++ {
		parts := plan(t, cfg, nil, Earliest, true)
		p, s := beam.NewPipelineWithRoot()
		passert.EqualsList(s, beam.ParDo(s, recordValues, Read(s, cfg, parts)), want)
		if err := runWithin(t, p, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	got := gatherKgo(t)
	for _, c := range []struct{ metric, client string }{
		{"kgo_connects_total", "admin/" + topic},
		{"kgo_connects_total", "read/" + topic + "/0"},
		{"kgo_connects_total", "read/" + topic + "/1"},
		{"kgo_read_bytes_total", "read/" + topic + "/0"},
		{"kgo_write_bytes_total", "read/" + topic + "/1"},
		{"kgo_read_bytes_total", "admin/" + topic},
		{"kgo_fetch_bytes_total", "read/" + topic + "/0"},
		{"kgo_fetch_bytes_total", "read/" + topic + "/1"},
		{"kgo_request_duration_e2e_seconds", "read/" + topic + "/0"},
	} {
		if v := got[c.metric][c.client]; v <= 0 {
			t.Errorf("%s{client=%q} = %v, want > 0 (have %v)", c.metric, c.client, v, got[c.metric])
		}
	}
	if v := got["kgo_connect_errors_total"]; len(v) != 0 {
		t.Errorf("kgo_connect_errors_total = %v, want no series", v)
	}
}

// Clients with the same name replace each other's series; clients with
// different names each keep theirs. Gathering never sees a duplicate.
func TestClientMetricsOneSeriesPerName(t *testing.T) {
	cfg := startKafka(t, 1)
	for _, name := range []string{"test/a", "test/a", "test/b"} {
		cl, err := newClient(name, kgo.SeedBrokers(cfg.Brokers...))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	got := gatherKgo(t)["kgo_connects_total"]
	for _, name := range []string{"test/a", "test/b"} {
		if got[name] != 1 {
			t.Errorf("kgo_connects_total{client=%q} = %v, want 1 (the last client's one connection)", name, got[name])
		}
	}
}

// A broker that cannot be reached counts connect errors, not connects.
func TestClientMetricsCountConnectErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cl, err := newClient("test/down", kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err == nil {
		t.Fatal("Ping to a closed port succeeded")
	}
	cl.Close()
	got := gatherKgo(t)
	if v := got["kgo_connect_errors_total"]["test/down"]; v < 1 {
		t.Errorf("kgo_connect_errors_total{client=\"test/down\"} = %v, want >= 1", v)
	}
	if v := got["kgo_connects_total"]["test/down"]; v != 0 {
		t.Errorf("kgo_connects_total{client=\"test/down\"} = %v, want 0", v)
	}
}
