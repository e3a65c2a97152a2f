// Package snapshots reads Iceberg tables as sources: the rows that append
// snapshots added, in sequence order, for pipelines that read a table as a
// stream (silver reads bronze) or recompute the days new rows touch (gold).
//
// ReadSnapshots returns PCollection<SnapshotRows>, one element per append
// snapshot, whose Range is a span of snapshot sequence numbers under the
// topic icebergio.SourceTopic(table). Written with icebergio.Write, those
// ranges become the downstream table's committed offsets, so ResumeSource
// plans the next read from exactly where the last one committed. Rows turns
// the snapshots into PCollection<T>; TouchedDays and ReadDays give the days
// they touch and every row of those days, for icebergio.OverwriteDays.
// A clean stop of the process (runners.Stop, through internal/stop) ends
// every read constructed before it after its current poll; FollowPromotions
// gives a downstream table the promoted columns of its source.
package snapshots
