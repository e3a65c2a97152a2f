package icebergio

// SourceTopic is the "topic" under which a pipeline that reads table ident
// records its progress: the offsets of an Iceberg source are snapshot
// sequence numbers, in the same summary key as Kafka offsets.
func SourceTopic(ident string) string { return "iceberg:" + ident }
