package kafkaio

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"
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
// broker and fetched bytes per topic, each > 0. By default the read's
// clients are summed under client="read/TOPIC", without histograms; with
// ClientMetricsPerPartition each partition's client has its own series and
// the request-latency histogram. Two runs make new clients with the same
// names: gathering must still succeed, with one series per client name.
func TestClientMetrics(t *testing.T) {
	// A topic of its own: the registry is the process's, and a pooled
	// client of an earlier test's read of topic, still dialing its stopped
	// broker, would add to the series this test wants empty.
	const topic = "client-metrics"
	c, err := kafkatest.Start(topic, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := Config{Brokers: c.Brokers(), Topic: topic}
	cl := client(t, cfg)
	want := produce(t, cl, "m", map[int32]int{0: 30, 1: 12})
	read := func(cfg Config) map[string]map[string]float64 {
		for run := 0; run < 2; run++ {
			parts := plan(t, cfg, nil, Earliest, true)
			p, s := beam.NewPipelineWithRoot()
			passert.EqualsList(s, beam.ParDo(s, recordValues, read(s, cfg, deal(parts, DefaultReaders))), want)
			if err := runWithin(t, p, 60*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		return gatherKgo(t)
	}
	check := func(got map[string]map[string]float64, metric, client string) {
		t.Helper()
		if v := got[metric][client]; v <= 0 {
			t.Errorf("%s{client=%q} = %v, want > 0 (have %v)", metric, client, v, got[metric])
		}
	}

	got := read(cfg)
	for _, metric := range []string{"kgo_connects_total", "kgo_read_bytes_total", "kgo_write_bytes_total", "kgo_fetch_bytes_total"} {
		check(got, metric, "read/"+topic)
		for client := range got[metric] {
			if strings.HasPrefix(client, "read/"+topic+"/") {
				t.Errorf("%s{client=%q}: a partition's client served on its own by default", metric, client)
			}
		}
	}
	check(got, "kgo_connects_total", "admin/"+topic)
	check(got, "kgo_read_bytes_total", "admin/"+topic)
	if v, ok := got["kgo_request_duration_e2e_seconds"]["read/"+topic]; ok {
		t.Errorf("kgo_request_duration_e2e_seconds{client=\"read/%s\"} = %v: the summed read has no histogram", topic, v)
	}
	if v := got["kgo_connect_errors_total"]; len(v) != 0 {
		t.Errorf("kgo_connect_errors_total = %v, want no series", v)
	}

	cfg.ClientMetricsPerPartition = true
	got = read(cfg)
	for _, c := range []struct{ metric, client string }{
		{"kgo_connects_total", "read/" + topic + "/0"},
		{"kgo_connects_total", "read/" + topic + "/1"},
		{"kgo_read_bytes_total", "read/" + topic + "/0"},
		{"kgo_write_bytes_total", "read/" + topic + "/1"},
		{"kgo_fetch_bytes_total", "read/" + topic + "/0"},
		{"kgo_fetch_bytes_total", "read/" + topic + "/1"},
		{"kgo_request_duration_e2e_seconds", "read/" + topic + "/0"},
	} {
		check(got, c.metric, c.client)
	}
}

// sumGroups sums counters and gauges over a group's clients, keeps every
// other label, leaves clients of other groups apart, and drops histograms.
func TestSumGroups(t *testing.T) {
	label := func(kv ...string) []*dto.LabelPair {
		var ls []*dto.LabelPair
		for i := 0; i < len(kv); i += 2 {
			ls = append(ls, &dto.LabelPair{Name: proto.String(kv[i]), Value: proto.String(kv[i+1])})
		}
		return ls
	}
	counter := func(v float64, kv ...string) *dto.Metric {
		return &dto.Metric{Label: label(kv...), Counter: &dto.Counter{Value: proto.Float64(v)}}
	}
	mf := &dto.MetricFamily{Name: proto.String("kgo_connects_total"), Help: proto.String("h"), Type: dto.MetricType_COUNTER.Enum(),
		Metric: []*dto.Metric{
			counter(1, "client", "read/t/0", "node_id", "1"),
			counter(2, "client", "read/t/1", "node_id", "1"),
			counter(4, "client", "read/t/1", "node_id", "2"),
			counter(8, "client", "read/u/0", "node_id", "1"),
		}}
	groupOf := map[string]string{"read/t/0": "read/t", "read/t/1": "read/t", "read/u/0": "read/u"}
	ch := make(chan prometheus.Metric, 10)
	sumGroups(mf, groupOf, ch)
	hist := &dto.MetricFamily{Name: proto.String("kgo_h"), Type: dto.MetricType_HISTOGRAM.Enum(),
		Metric: []*dto.Metric{{Label: label("client", "read/t/0"), Histogram: &dto.Histogram{SampleCount: proto.Uint64(1)}}}}
	sumGroups(hist, groupOf, ch)
	close(ch)
	got := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		var key []string
		for _, l := range d.GetLabel() {
			key = append(key, l.GetName()+"="+l.GetValue())
		}
		got[strings.Join(key, ",")] = d.GetCounter().GetValue()
	}
	want := map[string]float64{
		"client=read/t,node_id=1": 3,
		"client=read/t,node_id=2": 4,
		"client=read/u,node_id=1": 8,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summed series (-want +got):\n%s", diff)
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
