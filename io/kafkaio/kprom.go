package kafkaio

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// ClientMetricsNamespace is the prefix of franz-go's own client metrics
// (kprom's names: kgo_connects_total, kgo_connect_errors_total,
// kgo_read_bytes_total, kgo_write_bytes_total, kgo_read_errors_total,
// kgo_fetch_bytes_total, kgo_request_duration_e2e_seconds, ...).
// They keep kprom's names rather than haade_ ones, so that franz-go's own
// dashboards apply.
const ClientMetricsNamespace = "kgo"

// clientMetrics serves the kprom metrics of every Kafka client this package
// creates: the read's clients (one per partition) and the short-lived admin
// clients that plan a read and look up a topic.
//
// A kprom.Metrics belongs to one client: it makes its series when the
// client is created, and one shared by two clients would collect duplicate
// series. So each client gets its own, with the const label client naming
// its role and what it reads ("read/TOPIC/PARTITION" or "admin/TOPIC").
// A client that replaces one with the same name (a partition's client
// made anew, the next admin client) replaces its series too: Prometheus
// takes that as a counter reset. The series of a closed client stay until
// then, so that a bounded run's counts can still be scraped after the read.
//
// A read's clients are served summed, by default: one series per read
// (client="read/TOPIC"), broker and topic, and no histogram. At 1,024
// partitions, one series set per client with kprom's request-duration
// histogram made 48,234 lines on /metrics, and a scrape took over a
// second. Config.ClientMetricsPerPartition serves each partition's
// client on its own, with the histogram, for a read that needs them.
var clientMetrics = &kafkaClients{byName: map[string]clientSeries{}}

type kafkaClients struct {
	mu     sync.Mutex
	byName map[string]clientSeries
}

// clientSeries is one client's kprom metrics, and the client label they
// are summed under, or "" when they are served as they are.
type clientSeries struct {
	m     *kprom.Metrics
	group string
}

// newClient creates a client with opts and kprom hooks labelled
// client=name, with the request-duration histogram.
func newClient(name string, opts ...kgo.Opt) (*kgo.Client, error) {
	return newGroupedClient(name, "", opts...)
}

// newGroupedClient is newClient whose series, when group is not empty,
// are served summed with the other clients of group, under client=group,
// without histograms.
func newGroupedClient(name, group string, opts ...kgo.Opt) (*kgo.Client, error) {
	var hists []kprom.Histogram
	if group == "" {
		hists = []kprom.Histogram{kprom.RequestDurationE2E}
	}
	m := kprom.NewMetrics(ClientMetricsNamespace,
		kprom.Registry(nil), // collected through clientMetrics, never registered
		kprom.WithStaticLabel(prometheus.Labels{"client": name}),
		kprom.Histograms(hists...),
	)
	cl, err := kgo.NewClient(append(opts, kgo.WithHooks(m))...)
	if err != nil {
		return nil, err
	}
	// kgo.NewClient has run m.OnNewClient, which makes m's collectors:
	// only now may Collect read them.
	clientMetrics.mu.Lock()
	clientMetrics.byName[name] = clientSeries{m: m, group: group}
	clientMetrics.mu.Unlock()
	return cl, nil
}

// Describe describes nothing: the series come and go with clients and
// their const labels, so the collector is unchecked.
func (k *kafkaClients) Describe(chan<- *prometheus.Desc) {}

// Collect collects every client's kprom metrics: those of a group summed.
func (k *kafkaClients) Collect(ch chan<- prometheus.Metric) {
	k.mu.Lock()
	var alone []*kprom.Metrics
	grouped := prometheus.NewRegistry()
	groupOf := map[string]string{}
	for name, s := range k.byName {
		if s.group == "" {
			alone = append(alone, s.m)
			continue
		}
		groupOf[name] = s.group
		// Each client's const label makes its series its own: registering
		// cannot collide.
		_ = grouped.Register(s.m)
	}
	k.mu.Unlock()
	for _, m := range alone {
		m.Collect(ch)
	}
	if len(groupOf) == 0 {
		return
	}
	mfs, err := grouped.Gather()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc(ClientMetricsNamespace+"_clients", "kprom", nil, nil), err)
		return
	}
	for _, mf := range mfs {
		sumGroups(mf, groupOf, ch)
	}
}

// sumGroups sends the counters and gauges of mf summed over the clients of
// each group: one series per group and value of the other labels.
func sumGroups(mf *dto.MetricFamily, groupOf map[string]string, ch chan<- prometheus.Metric) {
	vt := prometheus.CounterValue
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
	case dto.MetricType_GAUGE:
		vt = prometheus.GaugeValue
	default:
		return // grouped clients have no histograms
	}
	type series struct {
		names, values []string
		v             float64
	}
	sums := map[string]*series{}
	var order []string
	for _, m := range mf.GetMetric() {
		s := &series{}
		for _, l := range m.GetLabel() {
			v := l.GetValue()
			if l.GetName() == "client" {
				v = groupOf[v]
			}
			s.names = append(s.names, l.GetName())
			s.values = append(s.values, v)
		}
		key := strings.Join(s.names, "\x00") + "\x01" + strings.Join(s.values, "\x00")
		if sums[key] == nil {
			sums[key] = s
			order = append(order, key)
		}
		sums[key].v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	slices.Sort(order)
	descs := map[string]*prometheus.Desc{}
	for _, key := range order {
		s := sums[key]
		names := strings.Join(s.names, "\x00")
		d := descs[names]
		if d == nil {
			d = prometheus.NewDesc(mf.GetName(), mf.GetHelp(), s.names, nil)
			descs[names] = d
		}
		ch <- prometheus.MustNewConstMetric(d, vt, s.v, s.values...)
	}
}
