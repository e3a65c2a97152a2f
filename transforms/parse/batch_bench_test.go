package parse

import (
	"fmt"
	"testing"

	"github.com/haade/haade/transforms/offsets"
)

// BenchmarkParseBatch measures ParseBatch on one Kafka batch of 4096
// records (the read's default batch), 1% of them malformed; run it with
// -cpu=1,2 to see what parsing in chunks gains.
func BenchmarkParseBatch(b *testing.B) {
	batch := offsets.Batch{Topic: "t", Partition: 0, Start: 0, End: 4096}
	for i := range 4096 {
		v := fmt.Appendf(nil, `{"source": "news-%d", "title": "Debt market update %d", "timestamp": "2026-05-19T10:00:00.%06dZ"}`, i%13, i, i)
		if i%100 == 0 {
			v = v[:len(v)-1] // malformed: no closing brace
		}
		batch.Records = append(batch.Records, offsets.Record{Offset: int64(i), Timestamp: 1_779_184_800_000, Value: v})
	}
	b.ReportAllocs()
	for b.Loop() {
		eb, db := ParseBatch(batch)
		if len(eb.Rows)+len(db.Rows) != len(batch.Records) {
			b.Fatalf("%d rows + %d dead letters of %d records", len(eb.Rows), len(db.Rows), len(batch.Records))
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(batch.Records))/b.Elapsed().Seconds(), "records/s")
}
