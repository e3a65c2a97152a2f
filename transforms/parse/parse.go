package parse

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn4x0[context.Context, offsets.Batch, func(EventBatch), func(DeadLetterBatch)](&eventsFn{})
	register.Emitter1[EventBatch]()
	register.Emitter1[DeadLetterBatch]()
}

// Events parses PCollection<offsets.Batch> into bronze events and dead
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

func (f *eventsFn) ProcessElement(ctx context.Context, b offsets.Batch, good func(EventBatch), bad func(DeadLetterBatch)) {
	eb, db := ParseBatch(b)
	Emit(ctx, b, eb, db, f.parsed, f.dead, good, bad)
}

// Emit gives both batches the Kafka batch's range and timestamp bounds,
// counts their rows (Beam counters parsed and dead, and this package's
// Prometheus collectors), and emits them. It is the end of every parser's
// ProcessElement, this package's and those beside it (io/registryio).
func Emit(ctx context.Context, b offsets.Batch, eb EventBatch, db DeadLetterBatch, parsed, dead beam.Counter, good func(EventBatch), bad func(DeadLetterBatch)) {
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
