package parse

import (
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*EventBatch)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DeadLetterBatch)(nil)).Elem())
}

// EventBatch holds the events parsed from one Kafka batch, with the range
// of offsets that batch covered.
type EventBatch struct {
	Source offsets.Range
	Rows   []tables.BronzeEvent
	// KafkaMinMs and KafkaMaxMs bound the Kafka timestamps of the batch.
	KafkaMinMs, KafkaMaxMs int64
	// Route is the index of the table these rows go to, among the tables
	// of the routes Events was given (0 without routes).
	Route int
	// Dels are the keys this batch deletes, with the option Keyed.
	Dels []offsets.KeyDelete
}

// Key returns row i's Kafka key, the key of a Keyed table
// (icebergio.KeyedBatch).
func (b EventBatch) Key(i int) string { return string(b.Rows[i].KafkaKey) }

// Deletes returns the keys the batch deletes (icebergio.KeyedBatch).
func (b EventBatch) Deletes() []offsets.KeyDelete { return b.Dels }

func (b EventBatch) Range() offsets.Range  { return b.Source }
func (b EventBatch) RowSlice() any         { return b.Rows }
func (b EventBatch) RowOffset(i int) int64 { return b.Rows[i].KafkaOffset }

// WithIngestedAt returns a copy of b whose rows have IngestedAt us; b and
// its rows are left as they are (enrich.IngestedAt).
func (b EventBatch) WithIngestedAt(us int64) any {
	b.Rows = stamped(b.Rows, func(r *tables.BronzeEvent) { r.IngestedAt = us })
	return b
}

// DeadLetterBatch holds the dead letters of one Kafka batch, with the
// range of offsets that batch covered.
type DeadLetterBatch struct {
	Source offsets.Range
	Rows   []tables.DeadLetter
	// KafkaMinMs and KafkaMaxMs bound the Kafka timestamps of the batch.
	KafkaMinMs, KafkaMaxMs int64
}

func (b EventBatch) SourceTimeRange() (int64, int64)      { return b.KafkaMinMs, b.KafkaMaxMs }
func (b DeadLetterBatch) SourceTimeRange() (int64, int64) { return b.KafkaMinMs, b.KafkaMaxMs }

func (b DeadLetterBatch) Range() offsets.Range  { return b.Source }
func (b DeadLetterBatch) RowSlice() any         { return b.Rows }
func (b DeadLetterBatch) RowOffset(i int) int64 { return b.Rows[i].KafkaOffset }

// WithIngestedAt returns a copy of b whose rows have IngestedAt us; b and
// its rows are left as they are (enrich.IngestedAt).
func (b DeadLetterBatch) WithIngestedAt(us int64) any {
	b.Rows = stamped(b.Rows, func(r *tables.DeadLetter) { r.IngestedAt = us })
	return b
}

// stamped returns a copy of rows with set applied to each row of the copy.
func stamped[R any](rows []R, set func(*R)) []R {
	rows = slices.Clone(rows)
	for i := range rows {
		set(&rows[i])
	}
	return rows
}
