package parse_test

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
)

const okValue = `{"source": "news", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`

func ptr[T any](v T) *T { return &v }

// Row keeps the whole Kafka record: key, headers (order and repeats) and
// the timestamp type, in a row and in a dead letter alike, a tombstone's
// key included.
func TestRowKeepsKafkaColumns(t *testing.T) {
	headers := []offsets.Header{{Key: "trace", Value: []byte("a")}, {Key: "trace", Value: nil}, {Key: "e", Value: []byte{}}}
	tests := []struct {
		name   string
		rec    offsets.Record
		wantEv *tables.BronzeEvent
		wantDL *tables.DeadLetter
	}{
		{"keyed event with headers, CreateTime",
			offsets.Record{Offset: 7, Timestamp: 1000, Key: []byte("k1"), Value: []byte(okValue), Headers: headers, TimestampType: 0},
			&tables.BronzeEvent{Source: ptr("news"), Title: ptr("t"), Timestamp: 1_779_184_800_000_000, KafkaTopic: "t", KafkaPartition: 3, KafkaOffset: 7,
				KafkaTimestamp: ptr(int64(1_000_000)), KafkaKey: []byte("k1"), KafkaHeaders: headers, KafkaTimestampType: ptr("CreateTime")}, nil},
		{"event, LogAppendTime, no key, no headers",
			offsets.Record{Offset: 8, Timestamp: -1000, Value: []byte(okValue), TimestampType: 1},
			&tables.BronzeEvent{Source: ptr("news"), Title: ptr("t"), Timestamp: 1_779_184_800_000_000, KafkaTopic: "t", KafkaPartition: 3, KafkaOffset: 8,
				KafkaTimestamp: ptr(int64(-1_000_000)), KafkaTimestampType: ptr("LogAppendTime")}, nil},
		{"no timestamp at all",
			offsets.Record{Offset: 9, Timestamp: -1, Value: []byte(okValue), TimestampType: -1},
			&tables.BronzeEvent{Source: ptr("news"), Title: ptr("t"), Timestamp: 1_779_184_800_000_000, KafkaTopic: "t", KafkaPartition: 3, KafkaOffset: 9}, nil},
		{"keyed tombstone keeps its key",
			offsets.Record{Offset: 10, Timestamp: 5, Key: []byte("debtor-4"), Null: true, Headers: headers[:1], TimestampType: 0},
			nil, &tables.DeadLetter{Error: parse.TombstoneReason, KafkaTopic: "t", KafkaPartition: 3, KafkaOffset: 10,
				KafkaTimestamp: ptr(int64(5000)), KafkaKey: []byte("debtor-4"), KafkaHeaders: headers[:1], KafkaTimestampType: ptr("CreateTime")}},
		{"keyed malformed record",
			offsets.Record{Offset: 11, Timestamp: 6, Key: []byte("k2"), Value: []byte(`{"source": 1}`), TimestampType: 1},
			nil, &tables.DeadLetter{Payload: []byte(`{"source": 1}`), KafkaTopic: "t", KafkaPartition: 3, KafkaOffset: 11,
				KafkaTimestamp: ptr(int64(6000)), KafkaKey: []byte("k2"), KafkaTimestampType: ptr("LogAppendTime")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, dl, ok := parse.Row("t", 3, &tc.rec, tc.rec.Value)
			if ok != (tc.wantEv != nil) {
				t.Fatalf("ok = %v, dead letter %+v", ok, dl)
			}
			if ok {
				if d := cmp.Diff(*tc.wantEv, ev); d != "" {
					t.Errorf("row (-want +got):\n%s", d)
				}
				return
			}
			dl.Error = dl.Error[:min(len(dl.Error), len(tc.wantDL.Error))] // the reason's detail is event.Parse's
			if d := cmp.Diff(*tc.wantDL, dl); d != "" {
				t.Errorf("dead letter (-want +got):\n%s", d)
			}
		})
	}
}

func init() {
	register.Function2x0(kafkaColumnsOfEvents)
	register.Function2x0(kafkaColumnsOfDeadLetters)
	register.Emitter1[string]()
}

func kafkaColumns(off int64, key []byte, hs []offsets.Header, tt *string) string {
	typ := "<nil>"
	if tt != nil {
		typ = *tt
	}
	return fmt.Sprintf("%d key=%q headers=%q type=%s", off, key, fmt.Sprint(hs), typ)
}

func kafkaColumnsOfEvents(b parse.EventBatch, emit func(string)) {
	for _, r := range b.Rows {
		emit(kafkaColumns(r.KafkaOffset, r.KafkaKey, r.KafkaHeaders, r.KafkaTimestampType))
	}
}

func kafkaColumnsOfDeadLetters(b parse.DeadLetterBatch, emit func(string)) {
	for _, r := range b.Rows {
		emit(kafkaColumns(r.KafkaOffset, r.KafkaKey, r.KafkaHeaders, r.KafkaTimestampType))
	}
}

// The same through parse.Events on a runner: the key, the headers and the
// timestamp type survive the batch's trip through Beam's coders.
func TestEventsKeepKafkaColumns(t *testing.T) {
	hs := []offsets.Header{{Key: "trace", Value: []byte("a")}, {Key: "trace", Value: []byte("b")}}
	b := offsets.Batch{Topic: "t", Partition: 1, Start: 0, End: 3, Records: []offsets.Record{
		{Offset: 0, Timestamp: 1, Key: []byte("k0"), Value: []byte(okValue), Headers: hs, TimestampType: 1},
		{Offset: 1, Timestamp: 2, Value: []byte(okValue), TimestampType: 0},
		{Offset: 2, Timestamp: 3, Key: []byte("k2"), Null: true, TimestampType: 0},
	}}
	p, s := beam.NewPipelineWithRoot()
	good, bad := parse.Events(s, beam.Create(s, b))
	passert.Equals(s, beam.ParDo(s, kafkaColumnsOfEvents, good),
		kafkaColumns(0, []byte("k0"), hs, ptr("LogAppendTime")), kafkaColumns(1, nil, nil, ptr("CreateTime")))
	passert.Equals(s, beam.ParDo(s, kafkaColumnsOfDeadLetters, bad), kafkaColumns(2, []byte("k2"), nil, ptr("CreateTime")))
	ptest.RunAndValidate(t, p)
}
