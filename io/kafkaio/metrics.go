package kafkaio

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
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

// lag sets the partition's lag from the high watermark of the last fetch:
// end offset minus the next offset to read. A bounded read's end is its
// restriction's end.
// lag exports, and returns, how far pos is behind the partition's high
// watermark (or the restriction's end, if that is nearer); -1 when the
// fetches carry no high watermark.
func (m partitionMetrics) lag(fs kgo.Fetches, r offsetrange.Restriction, pos int64) int64 {
	end := int64(-1)
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.HighWatermark > end {
			end = p.HighWatermark
		}
	})
	if r.End != unbounded && (end < 0 || r.End < end) {
		end = r.End
	}
	if end < 0 {
		return -1
	}
	m.lagValue(max(0, end-pos))
	return max(0, end-pos)
}

func (m partitionMetrics) lagValue(v int64) { m.lagGauge.Set(float64(v)) }
