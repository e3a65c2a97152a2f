// Package parse turns the Kafka records of fintech.debt.raw into bronze
// rows and dead letters: the Beam stage [Events], the plain function behind
// it ([ParseBatch]), the one step from a record to a row ([Row]), the batch
// types the stages pass on ([EventBatch], [DeadLetterBatch]) and the
// metrics they count.
//
// The value of each record is parsed by [event.Parse]
// (transforms/parse/event), whose package documentation says which JSON it
// accepts and why it rejects the rest.
//
// A record that is not an event becomes a dead letter ([Row], [DeadLetterOf]):
// its topic, partition, offset, key, headers and bytes, and an error column
// "REASON: DETAIL". REASON is stable, one of [DeadLetterReasons] (the
// parser's, [event.Reasons], and "tombstone"), and is what to group and count
// by; [SplitError] takes it apart. DETAIL says, for people, what was wrong.
package parse
