package icebergio

import (
	"reflect"
	"sort"

	"github.com/haade/haade/transforms/offsets"
)

// Batch is an element of the PCollection that Write takes: rows that came
// from one range of one source partition, in offset order. The range
// includes offsets that produced no row (gaps, rows sent elsewhere), so that
// the table's offsets advance over them.
type Batch interface {
	// Range returns the source offsets this batch covers.
	Range() offsets.Range
	// RowSlice returns a slice of row structs, e.g. []tables.BronzeEvent.
	RowSlice() any
	// RowOffset returns the source offset of row i.
	RowOffset(i int) int64
}

var batchType = reflect.TypeOf((*Batch)(nil)).Elem()

// firstRowAtOrAfter returns the index of the first row whose offset is at
// least next.
func firstRowAtOrAfter(b Batch, n int, next int64) int {
	return sort.Search(n, func(i int) bool { return b.RowOffset(i) >= next })
}

// SourceTimed is implemented by batches that know the source timestamps of
// their records (Kafka timestamps, milliseconds since the epoch); the
// committer uses them for the freshness metric.
type SourceTimed interface {
	SourceTimeRange() (minMs, maxMs int64)
}

// KeyedBatch is a Batch for a table written with Upsert: every row has a
// key, and the batch may also delete keys. The key of row i is the value of
// the table's key column in that row.
type KeyedBatch interface {
	Batch
	// Key returns row i's key.
	Key(i int) string
	// Deletes returns the keys this batch deletes (a tombstone, an event
	// that says so), each with its source offset, in offset order. A
	// delete is not a row: its key's live row goes, and no row replaces it.
	Deletes() []offsets.KeyDelete
}

var keyedBatchType = reflect.TypeOf((*KeyedBatch)(nil)).Elem()
