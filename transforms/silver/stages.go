package silver

import (
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn3x0[tables.BronzeSnapshot, func(Batch), func(RejectBatch)](&fromBronzeFn{})
	register.Emitter1[Batch]()
	register.Emitter1[RejectBatch]()
}

// FromBronze normalises PCollection<tables.BronzeSnapshot> (the rows of
// each bronze snapshot, from snapshots.SnapshotBatches): it returns
// PCollection<Batch> and PCollection<RejectBatch>, one of each per bronze
// snapshot, each carrying the snapshot's range.
// Rows keep bronze order: ingestion time, then Kafka partition and offset.
func FromBronze(s beam.Scope, snapshots beam.PCollection) (events, rejects beam.PCollection) {
	s = s.Scope("silver.FromBronze")
	return beam.ParDo2(s, &fromBronzeFn{}, snapshots)
}

type fromBronzeFn struct{}

func (fromBronzeFn) ProcessElement(sr tables.BronzeSnapshot, good func(Batch), bad func(RejectBatch)) {
	// Sorted in a copy: an input element is never modified.
	rows := append([]tables.BronzeEvent(nil), sr.Rows...)
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.IngestedAt != b.IngestedAt {
			return a.IngestedAt < b.IngestedAt
		}
		if a.KafkaPartition != b.KafkaPartition {
			return a.KafkaPartition < b.KafkaPartition
		}
		return a.KafkaOffset < b.KafkaOffset
	})
	eb := Batch{Source: sr.Range, Rows: make([]tables.SilverEvent, 0, len(rows))}
	rb := RejectBatch{Source: sr.Range}
	for _, r := range rows {
		ev, reason := Normalize(r, sr.SnapshotID)
		if reason != "" {
			rb.Rows = append(rb.Rows, tables.SilverReject{Source: r.Source, Title: r.Title, Timestamp: r.Timestamp, IngestedAt: r.IngestedAt,
				KafkaPartition: r.KafkaPartition, KafkaOffset: r.KafkaOffset, BronzeSnapshotID: sr.SnapshotID, Reason: reason})
			continue
		}
		eb.Rows = append(eb.Rows, ev)
	}
	good(eb)
	bad(rb)
}
