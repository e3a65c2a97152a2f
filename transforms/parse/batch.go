package parse

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Event)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DeadLetter)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*EventBatch)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DeadLetterBatch)(nil)).Elem())
}

// Event is one row of lakehouse.bronze_events. Times are microseconds since
// the epoch, UTC.
type Event struct {
	Source         *string `iceberg:"source"`
	Title          *string `iceberg:"title"`
	Timestamp      int64   `iceberg:"timestamp,required,timestamptz"`
	IngestedAt     int64   `iceberg:"ingested_at,required,timestamptz"`
	KafkaTopic     string  `iceberg:"kafka_topic,required"`
	KafkaPartition int32   `iceberg:"kafka_partition,required"`
	KafkaOffset    int64   `iceberg:"kafka_offset,required"`
	KafkaTimestamp *int64  `iceberg:"kafka_timestamp,timestamptz"`
	Extra          *string `iceberg:"extra,overflow"`
}

// DeadLetter is one row of lakehouse.bronze_events_dlq: a record that did
// not parse, with its original bytes (nil for a tombstone) and the reason.
type DeadLetter struct {
	Payload        []byte `iceberg:"payload"`
	Error          string `iceberg:"error,required"`
	KafkaTopic     string `iceberg:"kafka_topic,required"`
	KafkaPartition int32  `iceberg:"kafka_partition,required"`
	KafkaOffset    int64  `iceberg:"kafka_offset,required"`
	KafkaTimestamp *int64 `iceberg:"kafka_timestamp,timestamptz"`
	IngestedAt     int64  `iceberg:"ingested_at,required,timestamptz"`
}

// EventBatch holds the events parsed from one Kafka batch, with the range
// of offsets that batch covered.
type EventBatch struct {
	Source icebergio.Range
	Rows   []Event
	// KafkaMinMs and KafkaMaxMs bound the Kafka timestamps of the batch.
	KafkaMinMs, KafkaMaxMs int64
}

func (b EventBatch) Range() icebergio.Range { return b.Source }
func (b EventBatch) RowSlice() any          { return b.Rows }
func (b EventBatch) RowOffset(i int) int64  { return b.Rows[i].KafkaOffset }
func (b EventBatch) SetIngestedAt(us int64) {
	for i := range b.Rows {
		b.Rows[i].IngestedAt = us
	}
}

// DeadLetterBatch holds the dead letters of one Kafka batch, with the
// range of offsets that batch covered.
type DeadLetterBatch struct {
	Source icebergio.Range
	Rows   []DeadLetter
	// KafkaMinMs and KafkaMaxMs bound the Kafka timestamps of the batch.
	KafkaMinMs, KafkaMaxMs int64
}

func (b EventBatch) SourceTimeRange() (int64, int64)      { return b.KafkaMinMs, b.KafkaMaxMs }
func (b DeadLetterBatch) SourceTimeRange() (int64, int64) { return b.KafkaMinMs, b.KafkaMaxMs }

func (b DeadLetterBatch) Range() icebergio.Range { return b.Source }
func (b DeadLetterBatch) RowSlice() any          { return b.Rows }
func (b DeadLetterBatch) RowOffset(i int) int64  { return b.Rows[i].KafkaOffset }
func (b DeadLetterBatch) SetIngestedAt(us int64) {
	for i := range b.Rows {
		b.Rows[i].IngestedAt = us
	}
}
