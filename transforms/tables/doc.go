// Package tables is the table layer: each HAADE table as a Go value, with
// its row type, default identifier and partition spec.
//
//	table                        row            partitioned by
//	lakehouse.bronze_events      BronzeEvent    day(ingested_at)
//	lakehouse.bronze_events_dlq  DeadLetter     day(ingested_at)
//	lakehouse.silver_events      SilverEvent    day(timestamp)
//	lakehouse.silver_rejects     SilverReject   (none)
//	lakehouse.gold_source_daily  SourceDaily    identity(day)
//	lakehouse.gold_trending_terms TrendingTerm  day(hour)
//
// Row types are plain structs with `iceberg` tags (see
// io/icebergio/rows.SchemaOf for the tag grammar); times are microseconds
// since the epoch, UTC. The package is neutral: it imports no io package, so
// transforms produce and consume these rows without the io stack, and
// io/icebergio opens a table from its value (icebergio.Open takes a Table).
// A pipeline that writes a table under another name (a flag) takes the
// value with As, never a spec of its own.
package tables
