// Package kafkaio reads Kafka topics into Beam pipelines, natively in Go
// with franz-go: no Java expansion service.
//
// A read is planned once, at construction. Open validates the Config and
// connects one admin client; Topic.ID gives the topic id that the tables
// record with their offsets; Topic.Plan lists the partitions and the
// offset range to read from each: from the offsets a pipeline committed
// elsewhere (HAADE keeps them in its Iceberg tables), or from the earliest
// or latest offset, and, for a bounded read, up to the end offsets seen at
// start. Plan deals the partitions into a few groups (the readers) and
// spreads the groups over the runner's subtasks. Read is a splittable DoFn
// with one element per group, read by one franz-go client, whose
// restriction holds an offset range per partition, in the shape of Beam's
// natsio: it emits offsets.Batch elements (transforms/offsets), each of one
// partition, with the half-open range of offsets it covers (transaction
// markers and compacted gaps included, so that the batches of a partition
// tile its log), stamped with ingestion time. An unbounded read
// checkpoints itself after Config.CallDuration and resumes when idle; a
// bounded one ends at its end offsets.
//
//	topic, err := kafkaio.Open(ctx, cfg, 0)
//	...
//	defer topic.Close()
//	src, err := topic.Plan(ctx, kafkaio.PlanOpts{Committed: []offsets.Offsets{sink.Committed}})
//	...
//	batches := kafkaio.Read(s, src) // PCollection<offsets.Batch>
//
// A clean stop of the process (runners.Stop, through internal/stop) ends
// every read constructed before it at its current position, so that an
// in-process runner (Prism) drains and returns. Secrets never travel in the
// pipeline: Config.SASLPassword is left out when the Config is serialized,
// and workers read it from HAADE_KAFKA_SASL_PASSWORD (or the file named by
// HAADE_KAFKA_SASL_PASSWORD_FILE). The package's Prometheus collectors are
// in Collectors; the command registers them.
package kafkaio
