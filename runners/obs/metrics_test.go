package obs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// namesOf names every metric a collector describes, also those with no
// series yet, once each, in Gather's (sorted) order.
func TestNamesOf(t *testing.T) {
	emptyVec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_empty_total", Help: "h"}, []string{"a"})
	usedVec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "t", Subsystem: "s", Name: "used", Help: "h"}, []string{"a", "b"})
	usedVec.WithLabelValues("1", "2").Set(3)
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "t_seconds", Help: "h", ConstLabels: prometheus.Labels{"c": "d"}})
	// Two collectors of one name (different const labels): one name.
	f1 := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "t_func", Help: "h", ConstLabels: prometheus.Labels{"x": "1"}}, func() float64 { return 1 })
	f2 := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "t_func", Help: "h", ConstLabels: prometheus.Labels{"x": "2"}}, func() float64 { return 2 })
	got := namesOf(descsOf{emptyVec, usedVec, hist, f1, f2, unchecked{}})
	want := []string{"t_empty_total", "t_func", "t_s_used", "t_seconds"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namesOf (-want +got):\n%s", diff)
	}
}

// The collectors the commands register (this package's tests register
// kafkaio's, parse's and icebergio's) are all named, vectors with no series
// among them.
func TestMetricNames(t *testing.T) {
	got := map[string]bool{}
	for _, n := range MetricNames() {
		if got[n] {
			t.Errorf("%s listed twice", n)
		}
		got[n] = true
	}
	for _, n := range []string{"haade_kafka_records_read_total", "haade_kafka_consumer_lag", "haade_kafka_read_bytes_total"} {
		if !got[n] {
			t.Errorf("MetricNames has no %s: %v", n, got)
		}
	}
}

// unchecked describes nothing and collects one series; it has no name.
type unchecked struct{}

func (unchecked) Describe(chan<- *prometheus.Desc) {}
func (unchecked) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("t_unchecked", "h", nil, nil), prometheus.GaugeValue, 1)
}
