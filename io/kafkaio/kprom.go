package kafkaio

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
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
// The set of names is bounded by the partitions read.
var clientMetrics = &kafkaClients{byName: map[string]*kprom.Metrics{}}

type kafkaClients struct {
	mu     sync.Mutex
	byName map[string]*kprom.Metrics
}

// newClient creates a client with opts and kprom hooks labelled client=name.
func newClient(name string, opts ...kgo.Opt) (*kgo.Client, error) {
	m := kprom.NewMetrics(ClientMetricsNamespace,
		kprom.Registry(nil), // collected through clientMetrics, never registered
		kprom.WithStaticLabel(prometheus.Labels{"client": name}),
		kprom.Histograms(kprom.RequestDurationE2E),
	)
	cl, err := kgo.NewClient(append(opts, kgo.WithHooks(m))...)
	if err != nil {
		return nil, err
	}
	// kgo.NewClient has run m.OnNewClient, which makes m's collectors:
	// only now may Collect read them.
	clientMetrics.mu.Lock()
	clientMetrics.byName[name] = m
	clientMetrics.mu.Unlock()
	return cl, nil
}

// Describe describes nothing: the series come and go with clients and
// their const labels, so the collector is unchecked.
func (k *kafkaClients) Describe(chan<- *prometheus.Desc) {}

// Collect collects every client's kprom metrics.
func (k *kafkaClients) Collect(ch chan<- prometheus.Metric) {
	k.mu.Lock()
	ms := make([]*kprom.Metrics, 0, len(k.byName))
	for _, m := range k.byName {
		ms = append(ms, m)
	}
	k.mu.Unlock()
	for _, m := range ms {
		m.Collect(ch)
	}
}
