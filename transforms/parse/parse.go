package parse

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn4x0[context.Context, offsets.Batch, func(EventBatch), func(DeadLetterBatch)](&eventsFn{})
	register.Emitter1[EventBatch]()
	register.Emitter1[DeadLetterBatch]()
	register.Function1x1[EventBatch, int](routeOf)
}

// Option configures Events (and io/registryio's Events, which takes the
// same options).
type Option func(*Output)

// Routes sends each event to one of the tables of r (see transforms/route):
// Events then emits, per Kafka batch, one EventBatch per table of r, its
// Route the table's index, each with the batch's whole range; an event no
// rule matches is a dead letter ([route.Unrouted]). [Split] takes the
// tables' PCollections apart.
func Routes(r *route.Rules) Option {
	return func(o *Output) { o.Routes = r.String() }
}

// Keyed makes the events rows of a table that keeps one row per Kafka key
// (icebergio.Upsert on kafka_key): a tombstone with a key, and an event
// whose member "op" is "delete", delete their key (EventBatch.Dels) instead
// of being a dead letter or a row; a record without a key is a dead letter
// with the reason NoKey.
func Keyed() Option {
	return func(o *Output) { o.Keyed = true }
}

// NewOutput returns the Output of a parser's DoFn, configured by opts.
func NewOutput(opts ...Option) Output {
	var o Output
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Events parses PCollection<offsets.Batch> into bronze events and dead
// letters: it returns PCollection<EventBatch> and PCollection<DeadLetterBatch>,
// one of each per Kafka batch (with Routes, one EventBatch per table), each
// carrying the batch's offset range even when it holds no row. Every record
// ends in exactly one of them. Kafka coordinates are filled in; IngestedAt is
// left to enrich.
func Events(s beam.Scope, batches beam.PCollection, opts ...Option) (events, deadLetters beam.PCollection) {
	s = s.Scope("parse.Events")
	return beam.ParDo2(s, &eventsFn{Output: NewOutput(opts...)}, batches)
}

// Split takes the events of Events with Routes apart: PCollection<EventBatch>
// of route i is out[i], for i < n, the number of the rules' tables.
func Split(s beam.Scope, n int, events beam.PCollection) []beam.PCollection {
	if n == 1 {
		return []beam.PCollection{events}
	}
	return beam.Partition(s.Scope("parse.Split"), n, routeOf, events)
}

func routeOf(b EventBatch) int { return b.Route }

type eventsFn struct {
	Output
}

func (f *eventsFn) ProcessElement(ctx context.Context, b offsets.Batch, good func(EventBatch), bad func(DeadLetterBatch)) {
	eb, db := ParseBatch(b)
	f.Emit(ctx, b, eb, db, good, bad)
}

// Output is the end of every parser's DoFn, this package's and those beside
// it (io/registryio): it routes the events, counts the rows (Beam counters,
// and this package's Prometheus collectors) and emits them. A DoFn holds one,
// and calls its Setup from its own.
type Output struct {
	// Routes is a route specification (transforms/route); empty: every
	// event goes to one table.
	Routes string
	// Keyed is set by the option Keyed.
	Keyed bool

	rules        *route.Rules
	reach        map[string][]int // a topic's rules.TopicTables, with Keyed
	parsed, dead beam.Counter
}

// Setup makes the counters and parses the routes.
func (o *Output) Setup() error {
	o.parsed = beam.NewCounter("haade", "records_parsed")
	o.dead = beam.NewCounter("haade", "dead_letters")
	if o.Routes != "" {
		r, err := route.Parse(o.Routes)
		if err != nil {
			return err
		}
		o.rules = r
	}
	return nil
}

// Emit gives the batches the Kafka batch's range and timestamp bounds,
// routes the events when the Output has routes, counts the rows and emits
// them.
func (o *Output) Emit(ctx context.Context, b offsets.Batch, eb EventBatch, db DeadLetterBatch, good func(EventBatch), bad func(DeadLetterBatch)) {
	r := b.Range()
	eb.Source, db.Source = r, r
	if n := len(b.Records); n > 0 {
		eb.KafkaMinMs, eb.KafkaMaxMs = b.Records[0].Timestamp, b.Records[0].Timestamp
		for i := range b.Records {
			eb.KafkaMinMs = min(eb.KafkaMinMs, b.Records[i].Timestamp)
			eb.KafkaMaxMs = max(eb.KafkaMaxMs, b.Records[i].Timestamp)
		}
		db.KafkaMinMs, db.KafkaMaxMs = eb.KafkaMinMs, eb.KafkaMaxMs
	}
	if o.Keyed {
		eb, db = keyed(b, eb, db)
	}
	if eb.Dels == nil {
		eb.Dels = []offsets.KeyDelete{} // never nil: see icebergio's FileSet on Beam Java's RowCoder
	}
	routed := []EventBatch{eb}
	if o.rules != nil {
		routed, db = o.route(b, eb, db)
	}
	rows := 0
	for _, e := range routed {
		rows += len(e.Rows)
	}
	o.parsed.Inc(ctx, int64(rows))
	o.dead.Inc(ctx, int64(len(db.Rows)))
	recordsParsed.Add(float64(rows))
	for i := range db.Rows {
		reason, _, _ := strings.Cut(db.Rows[i].Error, ":")
		deadLetters.WithLabelValues(reason).Inc()
	}
	for _, e := range routed {
		good(e)
	}
	bad(db)
}

// keyed moves the deletes of keys out of eb's events and db's tombstones
// into eb.Dels, and makes the events without a key dead letters (see
// Keyed). Both keep offset order.
func keyed(b offsets.Batch, eb EventBatch, db DeadLetterBatch) (EventBatch, DeadLetterBatch) {
	rows := eb.Rows[:0:0]
	added := 0
	for i := range eb.Rows {
		ev := &eb.Rows[i]
		switch {
		case ev.KafkaKey == nil:
			db.Rows = append(db.Rows, DeadLetterOf(b.Topic, b.Partition, recordAt(b, ev.KafkaOffset), NoKeyReason))
			added++
		case isDelete(ev):
			eb.Dels = append(eb.Dels, offsets.KeyDelete{Key: string(ev.KafkaKey), Offset: ev.KafkaOffset})
		default:
			rows = append(rows, *ev)
		}
	}
	eb.Rows = rows
	dead := db.Rows[:0:0]
	for _, dl := range db.Rows {
		if dl.Payload == nil && dl.KafkaKey != nil { // a tombstone with a key
			eb.Dels = append(eb.Dels, offsets.KeyDelete{Key: string(dl.KafkaKey), Offset: dl.KafkaOffset})
			continue
		}
		dead = append(dead, dl)
	}
	db.Rows = dead
	slices.SortStableFunc(eb.Dels, func(a, b offsets.KeyDelete) int { return cmp.Compare(a.Offset, b.Offset) })
	if added > 0 {
		slices.SortStableFunc(db.Rows, func(a, b tables.DeadLetter) int { return cmp.Compare(a.KafkaOffset, b.KafkaOffset) })
	}
	return eb, db
}

// isDelete reports whether an event's member "op" is "delete".
func isDelete(ev *tables.BronzeEvent) bool {
	if ev.Extra == nil || !strings.Contains(*ev.Extra, `"op"`) {
		return false
	}
	var m struct {
		Op string `json:"op"`
	}
	return json.Unmarshal([]byte(*ev.Extra), &m) == nil && m.Op == "delete"
}

// recordAt returns the record of b at offset off, which one of its rows
// came from.
func recordAt(b offsets.Batch, off int64) *offsets.Record {
	j, found := slices.BinarySearchFunc(b.Records, off, func(r offsets.Record, off int64) int { return cmp.Compare(r.Offset, off) })
	if !found {
		panic(fmt.Sprintf("parse: a row at %s/%d offset %d is not in its batch", b.Topic, b.Partition, off))
	}
	return &b.Records[j]
}

// route splits eb's events into one batch per table of the rules, each with
// eb's range and bounds, and makes the events no rule matches dead letters,
// merged into db in offset order.
func (o *Output) route(b offsets.Batch, eb EventBatch, db DeadLetterBatch) ([]EventBatch, DeadLetterBatch) {
	n := o.rules.Len()
	out := make([]EventBatch, n)
	for i := range out {
		out[i] = EventBatch{Source: eb.Source, Route: i, KafkaMinMs: eb.KafkaMinMs, KafkaMaxMs: eb.KafkaMaxMs, Rows: []tables.BronzeEvent{}, Dels: []offsets.KeyDelete{}}
	}
	// Keyed, a key lives in one table at a time: an event's key is deleted
	// from every other table its topic can reach (it may have been routed
	// there before), and a delete goes to all of them.
	var others []int
	if o.Keyed {
		var ok bool
		if others, ok = o.reach[b.Topic]; !ok {
			if o.reach == nil {
				o.reach = map[string][]int{}
			}
			others = o.rules.TopicTables(b.Topic)
			o.reach[b.Topic] = others
		}
		for _, d := range eb.Dels {
			for _, k := range others {
				out[k].Dels = append(out[k].Dels, d)
			}
		}
		if len(others) == 1 {
			others = nil // the key's only table: its own rows replace it
		}
	}
	unrouted := 0
	for i := range eb.Rows {
		ev := &eb.Rows[i]
		k, reason, ok := o.rules.Route(ev)
		if ok {
			out[k].Rows = append(out[k].Rows, *ev)
			for _, j := range others {
				if j != k {
					out[j].Dels = append(out[j].Dels, offsets.KeyDelete{Key: string(ev.KafkaKey), Offset: ev.KafkaOffset})
				}
			}
			continue
		}
		db.Rows = append(db.Rows, DeadLetterOf(b.Topic, b.Partition, recordAt(b, ev.KafkaOffset), reason))
		unrouted++
	}
	if unrouted > 0 {
		slices.SortStableFunc(db.Rows, func(a, b tables.DeadLetter) int { return cmp.Compare(a.KafkaOffset, b.KafkaOffset) })
	}
	if len(eb.Dels) > 0 && len(others) > 1 {
		for k := range out {
			slices.SortStableFunc(out[k].Dels, func(a, b offsets.KeyDelete) int { return cmp.Compare(a.Offset, b.Offset) })
		}
	}
	return out, db
}

// parallelMin is the fewest records per goroutine for which ParseBatch
// splits a batch: below it, the cost of starting goroutines and moving rows
// outweighs what a second core gains.
const parallelMin = 1024

// ParseBatch parses every record of a Kafka batch: the plain function
// behind Events. A large batch is parsed in contiguous chunks on up to
// GOMAXPROCS goroutines; the rows keep the records' order, whatever the
// split.
//
// On Prism every partition is read in the same bundle, one after another,
// so the read, the parse and the Arrow appends of a backlog share one
// goroutine: parsing on every core is what lets the read stage use more
// than one.
func ParseBatch(b offsets.Batch) (EventBatch, DeadLetterBatch) {
	n := len(b.Records)
	rows := make([]tables.BronzeEvent, n)
	k := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if k <= 1 {
		m, dead := parseRecords(b, 0, n, rows)
		return EventBatch{Rows: rows[:m]}, DeadLetterBatch{Rows: dead}
	}
	// Chunk i parses records [lo_i, hi_i) into rows[lo_i:hi_i]; the events
	// of each chunk are then moved down behind those of the chunks before
	// it, which moves nothing when no record of a chunk was a dead letter.
	counts := make([]int, k)
	deads := make([][]tables.DeadLetter, k)
	var wg sync.WaitGroup
	for i := range k {
		lo, hi := i*n/k, (i+1)*n/k
		wg.Go(func() { counts[i], deads[i] = parseRecords(b, lo, hi, rows[lo:hi]) })
	}
	wg.Wait()
	var db DeadLetterBatch
	m := 0
	for i := range k {
		lo := i * n / k
		if m != lo {
			copy(rows[m:], rows[lo:lo+counts[i]])
		}
		m += counts[i]
		db.Rows = append(db.Rows, deads[i]...)
	}
	clear(rows[m:]) // drop the moved rows' pointers
	return EventBatch{Rows: rows[:m]}, db
}

// parseRecords parses records [lo, hi) of b: the events go to rows, in
// order, and their count is returned with the dead letters.
func parseRecords(b offsets.Batch, lo, hi int, rows []tables.BronzeEvent) (int, []tables.DeadLetter) {
	m := 0
	var dead []tables.DeadLetter
	for i := lo; i < hi; i++ {
		rec := &b.Records[i]
		ev, dl, ok := Row(b.Topic, b.Partition, rec, rec.Value)
		if !ok {
			dead = append(dead, dl)
			continue
		}
		rows[m] = ev
		m++
	}
	return m, dead
}
