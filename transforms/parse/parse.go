package parse

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
)

func init() {
	register.DoFn4x0[context.Context, kafkaio.Batch, func(EventBatch), func(DeadLetterBatch)](&eventsFn{})
	register.Emitter1[EventBatch]()
	register.Emitter1[DeadLetterBatch]()
}

// Events parses PCollection<kafkaio.Batch> into bronze events and dead
// letters: it returns PCollection<EventBatch> and PCollection<DeadLetterBatch>,
// one of each per Kafka batch, each carrying the batch's offset range even
// when it holds no row. Every record ends in exactly one of the two.
// Kafka coordinates are filled in; IngestedAt is left to enrich.
func Events(s beam.Scope, batches beam.PCollection) (events, deadLetters beam.PCollection) {
	s = s.Scope("parse.Events")
	return beam.ParDo2(s, &eventsFn{}, batches)
}

type eventsFn struct {
	parsed, dead beam.Counter
}

func (f *eventsFn) Setup() {
	f.parsed = beam.NewCounter("haade", "records_parsed")
	f.dead = beam.NewCounter("haade", "dead_letters")
}

func (f *eventsFn) ProcessElement(ctx context.Context, b kafkaio.Batch, good func(EventBatch), bad func(DeadLetterBatch)) {
	eb, db := ParseBatch(b)
	emitParsed(ctx, b, eb, db, f.parsed, f.dead, good, bad)
}

// emitParsed gives both batches the Kafka batch's range and timestamp
// bounds, counts their rows, and emits them.
func emitParsed(ctx context.Context, b kafkaio.Batch, eb EventBatch, db DeadLetterBatch, parsed, dead beam.Counter, good func(EventBatch), bad func(DeadLetterBatch)) {
	r := icebergio.Range{Topic: b.Topic, Partition: b.Partition, Start: b.Start, End: b.End}
	eb.Source, db.Source = r, r
	if n := len(b.Records); n > 0 {
		eb.KafkaMinMs, eb.KafkaMaxMs = b.Records[0].Timestamp, b.Records[0].Timestamp
		for i := range b.Records {
			eb.KafkaMinMs = min(eb.KafkaMinMs, b.Records[i].Timestamp)
			eb.KafkaMaxMs = max(eb.KafkaMaxMs, b.Records[i].Timestamp)
		}
		db.KafkaMinMs, db.KafkaMaxMs = eb.KafkaMinMs, eb.KafkaMaxMs
	}
	parsed.Inc(ctx, int64(len(eb.Rows)))
	dead.Inc(ctx, int64(len(db.Rows)))
	recordsParsed.Add(float64(len(eb.Rows)))
	for i := range db.Rows {
		reason, _, _ := strings.Cut(db.Rows[i].Error, ":")
		deadLetters.WithLabelValues(reason).Inc()
	}
	good(eb)
	bad(db)
}

// ParseBatch parses every record of a Kafka batch: the plain function
// behind Events.
func ParseBatch(b kafkaio.Batch) (EventBatch, DeadLetterBatch) {
	eb := EventBatch{Rows: make([]Event, 0, len(b.Records))}
	var db DeadLetterBatch
	for i := range b.Records {
		rec := &b.Records[i]
		var kts *int64
		if rec.Timestamp != -1 { // -1: the record has no timestamp; 0 and others before 1970 are times
			us := rec.Timestamp * 1000
			kts = &us
		}
		if rec.Null {
			db.Rows = append(db.Rows, DeadLetter{Error: "tombstone: the record has no value (null)",
				KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts})
			continue
		}
		f, err := ParseEvent(rec.Value)
		if err != nil {
			payload := rec.Value
			if payload == nil {
				payload = []byte{}
			}
			db.Rows = append(db.Rows, DeadLetter{Payload: payload, Error: fmt.Sprintf("%s: %v", Reason(err), err),
				KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts})
			continue
		}
		eb.Rows = append(eb.Rows, Event{Source: f.Source, Title: f.Title, Timestamp: f.Timestamp, Extra: f.Extra,
			KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts})
	}
	return eb, db
}
