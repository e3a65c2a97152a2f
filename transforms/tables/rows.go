package tables

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/transforms/offsets"
)

func init() {
	for _, t := range []any{BronzeEvent{}, DeadLetter{}, SilverEvent{}, SilverReject{}, SourceDaily{}, TrendingTerm{}, BronzeSnapshot{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
}

// BronzeEvent is one row of lakehouse.bronze_events. Times are
// microseconds since the epoch, UTC.
type BronzeEvent struct {
	Source         *string `iceberg:"source"`
	Title          *string `iceberg:"title"`
	Timestamp      int64   `iceberg:"timestamp,required,timestamptz"`
	IngestedAt     int64   `iceberg:"ingested_at,required,timestamptz"`
	KafkaTopic     string  `iceberg:"kafka_topic,required"`
	KafkaPartition int32   `iceberg:"kafka_partition,required"`
	KafkaOffset    int64   `iceberg:"kafka_offset,required"`
	KafkaTimestamp *int64  `iceberg:"kafka_timestamp,timestamptz"`
	Extra          *string `iceberg:"extra,overflow"`
	// KafkaKey, KafkaHeaders and KafkaTimestampType keep the rest of the
	// Kafka record: its key (nil: none), its headers (nil: none) and
	// whose time kafka_timestamp is, "CreateTime" or "LogAppendTime" (nil:
	// unknown). They came later: tables created before them gain them
	// through schema evolution, null in older files.
	KafkaKey           []byte           `iceberg:"kafka_key"`
	KafkaHeaders       []offsets.Header `iceberg:"kafka_headers"`
	KafkaTimestampType *string          `iceberg:"kafka_timestamp_type"`
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
	// KafkaKey, KafkaHeaders and KafkaTimestampType are as in BronzeEvent;
	// a tombstone's key is kept.
	KafkaKey           []byte           `iceberg:"kafka_key"`
	KafkaHeaders       []offsets.Header `iceberg:"kafka_headers"`
	KafkaTimestampType *string          `iceberg:"kafka_timestamp_type"`
}

// SilverEvent is one row of lakehouse.silver_events. Times are
// microseconds, UTC.
type SilverEvent struct {
	Source           string  `iceberg:"source,required"`
	Title            string  `iceberg:"title,required"`
	Timestamp        int64   `iceberg:"timestamp,required,timestamptz"`
	IngestedAt       int64   `iceberg:"ingested_at,required,timestamptz"`
	KafkaPartition   int32   `iceberg:"kafka_partition,required"`
	KafkaOffset      int64   `iceberg:"kafka_offset,required"`
	BronzeSnapshotID int64   `iceberg:"bronze_snapshot_id,required"`
	Extra            *string `iceberg:"extra,overflow"`
}

// SilverReject is one row of lakehouse.silver_rejects: a bronze row that
// failed validation, as it was, with the reason.
type SilverReject struct {
	Source           *string `iceberg:"source"`
	Title            *string `iceberg:"title"`
	Timestamp        int64   `iceberg:"timestamp,required,timestamptz"`
	IngestedAt       int64   `iceberg:"ingested_at,required,timestamptz"`
	KafkaPartition   int32   `iceberg:"kafka_partition,required"`
	KafkaOffset      int64   `iceberg:"kafka_offset,required"`
	BronzeSnapshotID int64   `iceberg:"bronze_snapshot_id,required"`
	Reason           string  `iceberg:"reason,required"`
}

// SourceDaily is one row of lakehouse.gold_source_daily.
type SourceDaily struct {
	Day    int32  `iceberg:"day,required,date"`
	Source string `iceberg:"source,required"`
	Events int64  `iceberg:"events,required"`
}

// TrendingTerm is one row of lakehouse.gold_trending_terms: one of the top
// terms of an hour's titles.
type TrendingTerm struct {
	Hour     int64  `iceberg:"hour,required,timestamptz"`
	Rank     int32  `iceberg:"rank,required"`
	Term     string `iceberg:"term,required"`
	Mentions int64  `iceberg:"mentions,required"`
}
