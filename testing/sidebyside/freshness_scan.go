package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
)

// freshColumns are the columns the freshness analysis reads: every
// contender's table has them (bronze's, Spark's and the Connect sink's).
var freshColumns = []string{"kafka_partition", "kafka_offset", "kafka_timestamp"}

// readSnapshots reads, for every append snapshot of a table, its commit time
// (timestamp-ms) and the rows it added, through iceberg-go's incremental
// append scan from that snapshot to itself: the files its manifests mark
// ADDED by it, never the ones it inherited.
func readSnapshots(ctx context.Context, cat catalog.Catalog, ident string) ([]snapshotRows, error) {
	id, err := icebergio.Identifier(ident)
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", ident, err)
	}
	var out []snapshotRows
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Operation != table.OpAppend {
			continue
		}
		tasks, err := tbl.NewIncrementalAppendScan().FromSnapshotInclusive(s.SnapshotID).ToSnapshot(s.SnapshotID).PlanFiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: plan snapshot %d: %w", ident, s.SnapshotID, err)
		}
		sr := snapshotRows{ID: s.SnapshotID, CommitMs: s.TimestampMs}
		if len(tasks) > 0 {
			_, recs, err := tbl.Scan(table.WithSelectedFields(freshColumns...)).ReadTasks(ctx, tasks)
			if err != nil {
				return nil, fmt.Errorf("%s: read snapshot %d: %w", ident, s.SnapshotID, err)
			}
			for rec, err := range recs {
				if err != nil {
					return nil, fmt.Errorf("%s: read snapshot %d: %w", ident, s.SnapshotID, err)
				}
				sr.Rows, err = appendAdded(sr.Rows, rec)
				rec.Release()
				if err != nil {
					return nil, fmt.Errorf("%s: snapshot %d: %w", ident, s.SnapshotID, err)
				}
			}
		}
		out = append(out, sr)
	}
	return out, nil
}

// appendAdded appends a record batch's rows. kafka_partition is an int32,
// kafka_offset an int64, kafka_timestamp a timestamp of any unit (micros in
// every contender's table); a null Kafka timestamp is an error, since the
// record's freshness cannot be known.
func appendAdded(rows []addedRow, rec arrow.RecordBatch) ([]addedRow, error) {
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("no column %s", name)
		}
		return rec.Column(idx[0]), nil
	}
	pc, err := col("kafka_partition")
	if err != nil {
		return rows, err
	}
	oc, err := col("kafka_offset")
	if err != nil {
		return rows, err
	}
	tc, err := col("kafka_timestamp")
	if err != nil {
		return rows, err
	}
	parts, ok1 := pc.(*array.Int32)
	offs, ok2 := oc.(*array.Int64)
	ts, ok3 := tc.(*array.Timestamp)
	if !ok1 || !ok2 || !ok3 {
		return rows, fmt.Errorf("column types %v, %v, %v: want int32, int64, timestamp", pc.DataType(), oc.DataType(), tc.DataType())
	}
	toMs := map[arrow.TimeUnit]int64{arrow.Second: -1000, arrow.Millisecond: 1, arrow.Microsecond: 1000, arrow.Nanosecond: 1_000_000}[ts.DataType().(*arrow.TimestampType).Unit]
	for i := 0; i < int(rec.NumRows()); i++ {
		if ts.IsNull(i) || parts.IsNull(i) || offs.IsNull(i) {
			return rows, fmt.Errorf("row with partition/offset/timestamp null (%v/%v/%v)", parts.IsNull(i), offs.IsNull(i), ts.IsNull(i))
		}
		ms := int64(ts.Value(i))
		if toMs < 0 {
			ms *= -toMs
		} else {
			ms /= toMs
		}
		rows = append(rows, addedRow{Partition: parts.Value(i), Offset: offs.Value(i), KafkaMs: ms})
	}
	return rows, nil
}
