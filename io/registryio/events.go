package registryio

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn4x1[context.Context, offsets.Batch, func(parse.EventBatch), func(parse.DeadLetterBatch), error](&registryEventsFn{})
}

// The dead-letter reason classes this file adds to parse.DeadLetterReasons.
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
// PCollection<parse.EventBatch> and PCollection<parse.DeadLetterBatch>, as Events does,
// and takes the same options (parse.Routes).
//
// The DoFn carries reg, never a password: each worker opens its own
// registry client, reading the password from its environment. A registry
// that is away, or a schema id it does not know yet, is waited for
// (reg.Wait) and never makes a dead letter; after that the bundle fails
// loudly and its records are read again when the pipeline restarts.
func Events(s beam.Scope, batches beam.PCollection, reg Config, opts ...parse.Option) (events, deadLetters beam.PCollection) {
	s = s.Scope("registryio.Events")
	secret.Export(EnvPassword, reg.Password) // the DoFn carries none
	return beam.ParDo2(s, &registryEventsFn{Registry: reg, Output: parse.NewOutput(opts...)}, batches)
}

type registryEventsFn struct {
	Registry Config
	Output   parse.Output

	res *Resolver
}

func (f *registryEventsFn) Setup() error {
	if err := f.Output.Setup(); err != nil {
		return err
	}
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
	f.Output.Emit(ctx, b, eb, db, good, bad)
	return nil
}

// ParseBatch parses every record of a Kafka batch, plain JSON
// or wire format, resolving schema ids through res and, when validate,
// checking each event against its schema. It only takes the wire header off
// and validates: the record becomes its row or dead letter through
// parse.Row, as on bronze's plain path, so dead letters keep the record's
// original bytes, header included. The error is not a record's: it wraps
// ErrRegistry when the registry stayed away or refused, and
// then the whole batch must be retried, never dead-lettered.
func ParseBatch(ctx context.Context, b offsets.Batch, res *Resolver, validate bool) (parse.EventBatch, parse.DeadLetterBatch, error) {
	eb := parse.EventBatch{Rows: make([]tables.BronzeEvent, 0, len(b.Records))}
	var db parse.DeadLetterBatch
	// A batch's records almost always share one schema id: remember the
	// last one instead of asking the resolver's locked cache each time.
	lastID, lastSch := -1, (*Schema)(nil)
	for i := range b.Records {
		rec := &b.Records[i]
		payload := rec.Value
		var sch *Schema
		if !rec.Null { // a tombstone has no header: parse.Row makes its dead letter
			id, p, wire, err := DecodeWire(rec.Value)
			if err != nil {
				db.Rows = append(db.Rows, parse.DeadLetterOf(b.Topic, b.Partition, rec, fmt.Sprintf("%s: %v", ReasonWireFormat, err)))
				continue
			}
			payload = p
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
						db.Rows = append(db.Rows, parse.DeadLetterOf(b.Topic, b.Partition, rec, fmt.Sprintf("%s: %v", ReasonWireFormat, err)))
						continue
					}
					return parse.EventBatch{}, parse.DeadLetterBatch{}, err
				}
			}
		}
		ev, dl, ok := parse.Row(b.Topic, b.Partition, rec, payload)
		if !ok {
			db.Rows = append(db.Rows, dl)
			continue
		}
		if validate {
			if sch == nil {
				var err error
				if sch, err = res.Latest(ctx); err != nil {
					return parse.EventBatch{}, parse.DeadLetterBatch{}, err
				}
			}
			if err := sch.Check(payload); err != nil {
				db.Rows = append(db.Rows, parse.DeadLetterOf(b.Topic, b.Partition, rec, fmt.Sprintf("%s: schema id %d: %v", ReasonSchema, sch.ID, err)))
				continue
			}
		}
		eb.Rows = append(eb.Rows, ev)
	}
	return eb, db, nil
}
