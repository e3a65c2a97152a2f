package icebergio

import (
	"github.com/haade/haade/transforms/offsets"
	"reflect"
	"sort"
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
