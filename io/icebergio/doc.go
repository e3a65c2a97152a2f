// Package icebergio writes Beam PCollections into Apache Iceberg tables
// exactly once, and reads tables back, with iceberg-go.
//
// A table is a Go value of the table layer (transforms/tables.Table): its
// identifier, a row struct whose fields carry `iceberg` tags (rows.SchemaOf
// maps them to an Iceberg schema), its partition fields and properties, over
// DefaultProperties. Open creates the table, or checks that an
// existing one can take the rows, and returns a Sink with the source offsets
// the table holds for a pipeline id.
//
// Write takes a PCollection of Batch elements: rows with the half-open
// source Range they cover. Writers turn each bundle's rows into Parquet data
// files; only the files' metadata is grouped, per window of Sink.Interval,
// and reaches the one committer of the table. The committer makes one
// snapshot per window that has rows, whose summary records the pipeline id,
// the window end and the source Offsets to resume from; the same offsets go
// into the table property ProgressProperty(pipeline) in the same
// transaction, where no snapshot expiry removes them. A window commits only
// when it continues the offsets the table holds, so a restart from
// CommittedOffsets neither skips nor repeats a record, whatever failed.
//
// ScanRows scans a table into a slice of row structs. OverwriteDays
// replaces whole day partitions. The other jobs are subpackages, which
// import this one and never the other way: io/icebergio/rows (row
// reflection, Arrow conversion and scans, which this package builds on),
// io/icebergio/snapshots (ReadSnapshots, snapshots appended since the
// offsets a pipeline committed, and Rows, TouchedDays and ReadDays, which
// turn them into rows) and io/icebergio/maintain (compaction, snapshot
// expiry, orphan files, manifest rewrites). CatalogConfig opens a SQL catalog (SQLite or PostgreSQL, in
// Java's JdbcCatalog layout) or a REST catalog; its password never travels
// in a pipeline (workers read HAADE_CATALOG_PASSWORD).
package icebergio
