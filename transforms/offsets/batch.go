package offsets

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Record)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Header)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Batch)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Range)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*KeyDelete)(nil)).Elem())
}

// KeyDelete is the delete of a key at a source offset: a tombstone, or an
// event that says so, for a table that keeps one row per key.
type KeyDelete struct {
	Key    string
	Offset int64
}

// Record is one Kafka record.
type Record struct {
	Offset int64
	// Timestamp is the record's Kafka timestamp, in milliseconds since the epoch.
	Timestamp int64
	Key       []byte
	Value     []byte
	// Null is true for a record with no value at all (a tombstone).
	Null bool
	// Headers are the record's headers, in their order; a key may repeat.
	// Nil when it has none.
	Headers []Header
	// TimestampType says whose time Timestamp is, as Kafka encodes it:
	// 0 (CreateTime: the producer's), 1 (LogAppendTime: the broker's), or
	// -1 (a message format without timestamps).
	TimestampType int8
}

// Header is one Kafka record header: the element of the kafka_headers
// column of bronze and its dead letters (a list of these structs).
type Header struct {
	Key   string `iceberg:"key,required"`
	Value []byte `iceberg:"value"`
}

// Batch is the element that the Kafka read emits: consecutive records of
// one partition. [Start, End) is the range of offsets the batch covers,
// including offsets that carry no record (transaction markers, aborted or
// compacted records), so the batches of a partition tile its offsets.
type Batch struct {
	Topic     string
	Partition int32
	Start     int64
	End       int64
	Records   []Record
}

// Range returns the range of offsets the batch covers. Stages that turn a
// batch into rows carry it on their own batches, so that the table's
// committer records exactly the offsets the batch covered.
func (b Batch) Range() Range {
	return Range{Topic: b.Topic, Partition: b.Partition, Start: b.Start, End: b.End}
}
