package registryio

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
)

func init() {
	register.DoFn4x1[context.Context, offsets.Batch, func(parse.EventBatch), func(parse.DeadLetterBatch), error](&registryEventsFn{})
}

// The dead-letter reason classes this file adds to those of parse.Reason.
const (
	// ReasonSchema: the event violates its JSON Schema; the rest of the
	// reason names the rule (JSON pointer, keyword, message).
	ReasonSchema = "schema"
	// ReasonWireFormat: the value starts with the magic byte 0 but its
	// header is short, or its schema id names a schema that is not a JSON
	// Schema.
	ReasonWireFormat = "wire_format"
)

// Events is parse.Events for topics whose records may carry
// Confluent's wire format (magic byte 0, a 4-byte schema id, then the JSON)
// as well as plain JSON, with schema ids resolved through the registry of
// reg, and, when reg.Validate, each event checked against its JSON Schema
// (plain JSON against the latest version of reg.Subject). It returns
// PCollection<parse.EventBatch> and PCollection<parse.DeadLetterBatch>, as Events does.
//
// The DoFn carries reg, never a password: each worker opens its own
// registry client, reading the password from its environment. A registry
// that is away, or a schema id it does not know yet, is waited for
// (reg.Wait) and never makes a dead letter; after that the bundle fails
// loudly and its records are read again when the pipeline restarts.
func Events(s beam.Scope, batches beam.PCollection, reg Config) (events, deadLetters beam.PCollection) {
	s = s.Scope("registryio.Events")
	return beam.ParDo2(s, &registryEventsFn{Registry: reg}, batches)
}

type registryEventsFn struct {
	Registry Config

	res          *Resolver
	parsed, dead beam.Counter
}

func (f *registryEventsFn) Setup() error {
	f.parsed = beam.NewCounter("haade", "records_parsed")
	f.dead = beam.NewCounter("haade", "dead_letters")
	res, err := NewResolver(f.Registry)
	if err != nil {
		return err
	}
	f.res = res
	return nil
}

func (f *registryEventsFn) ProcessElement(ctx context.Context, b offsets.Batch, good func(parse.EventBatch), bad func(parse.DeadLetterBatch)) error {
	eb, db, err := ParseBatch(ctx, b, f.res, f.Registry.Validate)
	if err != nil {
		// Nothing of this batch is emitted: its offsets are not committed.
		return fmt.Errorf("registryio: %s[%d] offsets %d-%d: %w", b.Topic, b.Partition, b.Start, b.End, err)
	}
	parse.Emit(ctx, b, eb, db, f.parsed, f.dead, good, bad)
	return nil
}

// ParseBatch parses every record of a Kafka batch, plain JSON
// or wire format, resolving schema ids through res and, when validate,
// checking each event against its schema. Dead letters keep the record's
// original bytes, header included. The error is not a record's: it wraps
// ErrRegistry when the registry stayed away or refused, and
// then the whole batch must be retried, never dead-lettered.
func ParseBatch(ctx context.Context, b offsets.Batch, res *Resolver, validate bool) (parse.EventBatch, parse.DeadLetterBatch, error) {
	eb := parse.EventBatch{Rows: make([]parse.Event, 0, len(b.Records))}
	var db parse.DeadLetterBatch
	// A batch's records almost always share one schema id: remember the
	// last one instead of asking the resolver's locked cache each time.
	lastID, lastSch := -1, (*Schema)(nil)
	for i := range b.Records {
		rec := &b.Records[i]
		var kts *int64
		if rec.Timestamp >= 0 {
			us := rec.Timestamp * 1000
			kts = &us
		}
		if rec.Null {
			db.Rows = append(db.Rows, parse.DeadLetter{Error: "tombstone: the record has no value (null)",
				KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts})
			continue
		}
		id, payload, wire, err := DecodeWire(rec.Value)
		if err != nil {
			db.Rows = append(db.Rows, deadLetter(b, rec, kts, fmt.Sprintf("%s: %v", ReasonWireFormat, err)))
			continue
		}
		var sch *Schema
		if wire {
			// The id is resolved even without validation: an id the registry
			// does not know yet may be a producer ahead of it, and is waited for.
			if id == lastID {
				sch = lastSch
			} else if sch, err = res.ByID(ctx, id); err == nil {
				lastID, lastSch = id, sch
			}
			if err != nil {
				if errors.Is(err, ErrNotJSONSchema) {
					db.Rows = append(db.Rows, deadLetter(b, rec, kts, fmt.Sprintf("%s: %v", ReasonWireFormat, err)))
					continue
				}
				return parse.EventBatch{}, parse.DeadLetterBatch{}, err
			}
		}
		f, err := parse.ParseEvent(payload)
		if err != nil {
			db.Rows = append(db.Rows, deadLetter(b, rec, kts, fmt.Sprintf("%s: %v", parse.Reason(err), err)))
			continue
		}
		if validate {
			if sch == nil {
				if sch, err = res.Latest(ctx); err != nil {
					return parse.EventBatch{}, parse.DeadLetterBatch{}, err
				}
			}
			if err := sch.Check(payload); err != nil {
				db.Rows = append(db.Rows, deadLetter(b, rec, kts, fmt.Sprintf("%s: schema id %d: %v", ReasonSchema, sch.ID, err)))
				continue
			}
		}
		eb.Rows = append(eb.Rows, parse.Event{Source: f.Source, Title: f.Title, Timestamp: f.Timestamp, Extra: f.Extra,
			KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts})
	}
	return eb, db, nil
}

// deadLetter is the dead letter of rec, with its original bytes.
func deadLetter(b offsets.Batch, rec *offsets.Record, kts *int64, reason string) parse.DeadLetter {
	payload := rec.Value
	if payload == nil {
		payload = []byte{}
	}
	return parse.DeadLetter{Payload: payload, Error: reason,
		KafkaTopic: b.Topic, KafkaPartition: b.Partition, KafkaOffset: rec.Offset, KafkaTimestamp: kts}
}
