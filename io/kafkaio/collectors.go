package kafkaio

import "github.com/prometheus/client_golang/prometheus"

// The Prometheus metrics of this package.
var (
	recordsRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_kafka_records_read_total", Help: "Kafka records read, per topic and partition.",
	}, []string{"topic", "partition"})
	bytesRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_kafka_read_bytes_total", Help: "Bytes of Kafka record keys and values read.",
	}, []string{"topic", "partition"})
	consumerLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_kafka_consumer_lag", Help: "End offset minus next offset to read, per partition (records).",
	}, []string{"topic", "partition"})
)

// Collectors returns this package's Prometheus collectors. A command
// registers them with the registry it serves (runners/obs.MustRegister);
// the package never registers them itself. The last one serves franz-go's
// own metrics of this package's Kafka clients (kprom; see
// ClientMetricsNamespace).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{recordsRead, bytesRead, consumerLag, clientMetrics}
}
