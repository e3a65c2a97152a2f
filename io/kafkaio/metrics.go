package kafkaio

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/haade/haade/transforms/offsets"
)

// partitionMetrics are the Prometheus series of one partition, looked up
// once per call rather than once per batch.
type partitionMetrics struct {
	records, bytes prometheus.Counter
	lagGauge       prometheus.Gauge
}

func metricsFor(topic string, partition int32) partitionMetrics {
	p := strconv.Itoa(int(partition))
	return partitionMetrics{
		records:  recordsRead.WithLabelValues(topic, p),
		bytes:    bytesRead.WithLabelValues(topic, p),
		lagGauge: consumerLag.WithLabelValues(topic, p),
	}
}

func (m partitionMetrics) read(b offsets.Batch) {
	n := 0
	for i := range b.Records {
		n += len(b.Records[i].Key) + len(b.Records[i].Value)
	}
	m.records.Add(float64(len(b.Records)))
	m.bytes.Add(float64(n))
}

// lag exports, and returns, how far pos is behind the partition's high
// watermark hw (or its range's end, if that is nearer); -1 when hw is
// unknown (negative) and the range has no end.
func (m partitionMetrics) lag(hw, end, pos int64) int64 {
	if end != unbounded && (hw < 0 || end < hw) {
		hw = end
	}
	if hw < 0 {
		return -1
	}
	m.lagValue(max(0, hw-pos))
	return max(0, hw-pos)
}

func (m partitionMetrics) lagValue(v int64) { m.lagGauge.Set(float64(v)) }
