// Package silver turns bronze rows into clean, deduplicated silver rows:
// whitespace trimmed and collapsed, canonical lower-cased source names,
// invalid rows sent to a rejects table with their reason, and duplicates
// (same source, title and event timestamp) dropped within a horizon.
package silver

import (
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	for _, t := range []any{Batch{}, RejectBatch{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
}

// Batch holds the silver rows made from one bronze snapshot.
type Batch struct {
	Source offsets.Range
	Rows   []tables.SilverEvent
}

func (b Batch) Range() offsets.Range { return b.Source }
func (b Batch) RowSlice() any        { return b.Rows }

// RowOffset is the bronze snapshot's sequence number: every row of a
// snapshot has the same position.
func (b Batch) RowOffset(int) int64 { return b.Source.End - 1 }

// RejectBatch holds the rejects of one bronze snapshot.
type RejectBatch struct {
	Source offsets.Range
	Rows   []tables.SilverReject
}

func (b RejectBatch) Range() offsets.Range { return b.Source }
func (b RejectBatch) RowSlice() any        { return b.Rows }
func (b RejectBatch) RowOffset(int) int64  { return b.Source.End - 1 }

// Clean collapses runs of white space into one space and trims the ends.
func Clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// CanonicalSource lower-cases a source name and joins its words with "-":
// " Central  Bank " is "central-bank".
func CanonicalSource(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "-")) }

// earliest is the oldest event time silver accepts.
var earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// futureSlack is how far past its ingestion an event time may lie.
const futureSlack = 24 * time.Hour

// Normalize turns one bronze row into a silver row, or says why it is
// rejected.
func Normalize(b tables.BronzeEvent, snapshot int64) (tables.SilverEvent, string) {
	var src, title string
	if b.Source != nil {
		src = CanonicalSource(*b.Source)
	}
	if b.Title != nil {
		title = Clean(*b.Title)
	}
	switch {
	case src == "":
		return tables.SilverEvent{}, "missing source"
	case title == "":
		return tables.SilverEvent{}, "missing title"
	case b.Timestamp < earliest:
		return tables.SilverEvent{}, "timestamp before 2000-01-01"
	case b.Timestamp > b.IngestedAt+futureSlack.Microseconds():
		return tables.SilverEvent{}, "timestamp more than a day after ingestion"
	}
	return tables.SilverEvent{Source: src, Title: title, Timestamp: b.Timestamp, IngestedAt: b.IngestedAt,
		KafkaPartition: b.KafkaPartition, KafkaOffset: b.KafkaOffset, BronzeSnapshotID: snapshot, Extra: b.Extra}, ""
}
