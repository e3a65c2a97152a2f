//go:build e2e

package analytics

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// trinoTimestamp is how Trino's protocol writes a timestamp(6) with time
// zone in the session zone UTC: six fractional digits, always.
const trinoTimestamp = "2006-01-02 15:04:05.000000 MST"

// row is one Trino row by column name.
type row map[string]any

func (r *result) maps() []row {
	out := make([]row, len(r.Rows))
	for i, vs := range r.Rows {
		m := row{}
		for j, c := range r.Columns {
			m[c.Name] = vs[j]
		}
		out[i] = m
	}
	return out
}

func (r row) str(c string) *string {
	v, ok := r[c]
	if !ok {
		panic("no column " + c)
	}
	if v == nil {
		return nil
	}
	s := v.(string)
	return &s
}

func (r row) int64(c string) int64 {
	n, err := r[c].(json.Number).Int64()
	if err != nil {
		panic(fmt.Sprintf("column %s: %v", c, err))
	}
	return n
}

// micros parses a timestamp(6) with time zone into microseconds since the
// epoch; nil stays nil.
func (r row) micros(c string) (*int64, error) {
	v := r[c]
	if v == nil {
		return nil, nil
	}
	t, err := time.Parse(trinoTimestamp, v.(string))
	if err != nil {
		return nil, fmt.Errorf("column %s: %v", c, err)
	}
	us := t.UnixMicro()
	return &us, nil
}

func (r row) mustMicros(c string) int64 {
	us, err := r.micros(c)
	if err != nil {
		panic(err)
	}
	if us == nil {
		panic("column " + c + " is null")
	}
	return *us
}

// bytes decodes a varbinary, which the protocol sends as base64.
func (r row) bytes(c string) []byte {
	v := r[c]
	if v == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(v.(string))
	if err != nil {
		panic(fmt.Sprintf("column %s: %v", c, err))
	}
	return b
}

func bronzeRow(r row) tables.BronzeEvent {
	kt, err := r.micros("kafka_timestamp")
	if err != nil {
		panic(err)
	}
	return tables.BronzeEvent{Source: r.str("source"), Title: r.str("title"), Timestamp: r.mustMicros("timestamp"),
		IngestedAt: r.mustMicros("ingested_at"), KafkaTopic: *r.str("kafka_topic"), KafkaPartition: int32(r.int64("kafka_partition")),
		KafkaOffset: r.int64("kafka_offset"), KafkaTimestamp: kt, Extra: r.str("extra"),
		KafkaKey: r.bytes("kafka_key"), KafkaHeaders: r.headers("kafka_headers"), KafkaTimestampType: r.str("kafka_timestamp_type")}
}

func deadLetterRow(r row) tables.DeadLetter {
	kt, err := r.micros("kafka_timestamp")
	if err != nil {
		panic(err)
	}
	return tables.DeadLetter{Payload: r.bytes("payload"), Error: *r.str("error"), KafkaTopic: *r.str("kafka_topic"),
		KafkaPartition: int32(r.int64("kafka_partition")), KafkaOffset: r.int64("kafka_offset"), KafkaTimestamp: kt,
		IngestedAt: r.mustMicros("ingested_at"),
		KafkaKey:   r.bytes("kafka_key"), KafkaHeaders: r.headers("kafka_headers"), KafkaTimestampType: r.str("kafka_timestamp_type")}
}

// headers decodes kafka_headers, an array(row(key varchar, value
// varbinary)): the protocol sends each row as a JSON array of its fields
// in order, the varbinary as base64.
func (r row) headers(c string) []offsets.Header {
	v := r[c]
	if v == nil {
		return nil
	}
	var out []offsets.Header
	for _, e := range v.([]any) {
		f := e.([]any)
		h := offsets.Header{Key: f[0].(string)}
		if f[1] != nil {
			b, err := base64.StdEncoding.DecodeString(f[1].(string))
			if err != nil {
				panic(fmt.Sprintf("column %s: %v", c, err))
			}
			h.Value = b
		}
		out = append(out, h)
	}
	return out
}
