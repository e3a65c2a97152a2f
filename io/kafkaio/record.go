package kafkaio

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Partition)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Group)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*groupRestriction)(nil)).Elem())
}

// Partition is one partition to read, with its range of offsets [Start,
// End). End is math.MaxInt64 for an unbounded read.
type Partition struct {
	ID    int32
	Start int64
	End   int64
}

// RecordOf is what a read keeps of a franz-go record: its offset, its
// timestamp in milliseconds and its type, its key, its value (a nil value
// is a tombstone) and its headers. It points into rec's key and value, never copies them: the
// bytes are the record's own, and only the kgo.Record structs are pooled.
func RecordOf(rec *kgo.Record) offsets.Record {
	r := offsets.Record{Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(),
		Key: rec.Key, Value: rec.Value, Null: rec.Value == nil, TimestampType: rec.Attrs.TimestampType()}
	if len(rec.Headers) > 0 {
		r.Headers = make([]offsets.Header, len(rec.Headers))
		for i, h := range rec.Headers {
			r.Headers[i] = offsets.Header{Key: h.Key, Value: h.Value}
		}
	}
	return r
}
