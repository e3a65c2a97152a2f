// Package offsets holds the one shape of a source position that HAADE
// carries end to end: a Kafka record and the batch the read emits
// (Record, Batch), the half-open range of offsets a batch covers (Range),
// and the next offset of every partition that a table records in its
// snapshot summaries (Offsets, with its JSON form).
//
// It is neutral on purpose: it imports no io package, no iceberg-go, no
// franz-go, no AWS SDK and no SQL driver, so transforms can take these
// types without pulling the io stack in. io/kafkaio emits Batch, the
// transforms carry its Range on their row batches, and io/icebergio
// records Offsets.
//
// An Iceberg source uses the same shapes: its "topic" is
// "iceberg:<table>", its only partition 0, and its offsets are snapshot
// sequence numbers.
package offsets
