package parse

import (
	"fmt"
	"strings"

	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
)

// Tombstone is the reason of a record with no value at all (a tombstone):
// the dead letter keeps its coordinates and key, and its payload is null.
const Tombstone = "tombstone"

// TombstoneReason is a tombstone's whole error column.
const TombstoneReason = Tombstone + ": the record has no value (null)"

// NoKey is the reason of a record without a Kafka key, for a table that
// keeps one row per key (Keyed); NoKeyReason is its whole error column.
const (
	NoKey       = "no_key"
	NoKeyReason = NoKey + ": the record has no Kafka key, and the table keeps one row per key (--upsert)"
)

// DeadLetterReasons lists every reason a dead letter of bronze's can carry
// at the start of its error column (see SplitError): the parser's
// (event.Reasons), Tombstone, route.Unrouted (with --route) and NoKey
// (with --upsert). io/registryio adds its own two reasons with
// --schema-registry.
func DeadLetterReasons() []string {
	return append(event.Reasons(), Tombstone, route.Unrouted, NoKey)
}

// SplitError splits a dead letter's error column, "REASON: DETAIL", into
// its reason (one of DeadLetterReasons, or registryio's) and the detail,
// which is for people, not for matching. A column without ": " is all
// reason.
func SplitError(column string) (reason, detail string) {
	reason, detail, _ = strings.Cut(column, ": ")
	return reason, detail
}

// KafkaTime is a record's Kafka timestamp (milliseconds since the epoch) as
// the kafka_timestamp column holds it: microseconds, or nil for Kafka's "no
// timestamp" (-1). Zero and every time before 1970 are times, and kept.
func KafkaTime(ms int64) *int64 {
	if ms == -1 {
		return nil
	}
	us := ms * 1000
	return &us
}

// Row is the one step from a Kafka record of topic's partition to what
// bronze stores: the event parsed from value, with the record's Kafka
// columns, and ok; or, when the record is a tombstone or value does not
// parse, its dead letter (DeadLetterOf) and !ok. value is rec.Value, or
// what is left of it once a reader took a header off (io/registryio): a
// dead letter keeps the record's own bytes either way.
//
// Every parser of Kafka records calls it: ParseBatch (bronze's parse.Events),
// registryio.ParseBatch, and the benchmark's pure-Go loop, so the same
// record makes the same row whichever path it takes.
func Row(topic string, partition int32, rec *offsets.Record, value []byte) (tables.BronzeEvent, tables.DeadLetter, bool) {
	if rec.Null {
		return tables.BronzeEvent{}, DeadLetterOf(topic, partition, rec, TombstoneReason), false
	}
	f, err := event.Parse(value)
	if err != nil {
		return tables.BronzeEvent{}, DeadLetterOf(topic, partition, rec, fmt.Sprintf("%s: %v", event.Reason(err), err)), false
	}
	return tables.BronzeEvent{Source: f.Source, Title: f.Title, Timestamp: f.Timestamp, Extra: f.Extra,
		KafkaTopic: topic, KafkaPartition: partition, KafkaOffset: rec.Offset, KafkaTimestamp: KafkaTime(rec.Timestamp),
		KafkaKey: rec.Key, KafkaHeaders: rec.Headers, KafkaTimestampType: TimestampType(rec.TimestampType)}, tables.DeadLetter{}, true
}

// DeadLetterOf is the dead letter of rec with reason ("class: detail"): its
// original bytes (null for a tombstone, empty for an empty value) and its
// Kafka columns, the key of a tombstone included.
func DeadLetterOf(topic string, partition int32, rec *offsets.Record, reason string) tables.DeadLetter {
	var payload []byte
	if !rec.Null {
		payload = rec.Value
		if payload == nil {
			payload = []byte{}
		}
	}
	return tables.DeadLetter{Payload: payload, Error: reason,
		KafkaTopic: topic, KafkaPartition: partition, KafkaOffset: rec.Offset, KafkaTimestamp: KafkaTime(rec.Timestamp),
		KafkaKey: rec.Key, KafkaHeaders: rec.Headers, KafkaTimestampType: TimestampType(rec.TimestampType)}
}

// The values of the kafka_timestamp_type column. Rows point at these two,
// so a row's column costs no allocation.
var (
	createTime    = "CreateTime"
	logAppendTime = "LogAppendTime"
)

// TimestampType is the kafka_timestamp_type column of a record's Kafka
// timestamp type (offsets.Record.TimestampType): "CreateTime" (the
// producer's time) for 0, "LogAppendTime" (the broker's) for 1, and nil
// (unknown) for anything else.
func TimestampType(t int8) *string {
	switch t {
	case 0:
		return &createTime
	case 1:
		return &logAppendTime
	}
	return nil
}
