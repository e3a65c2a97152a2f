package kit

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
)

// ForeignTopic is the kafka_topic of the row ForeignAppendAndExpire adds, so
// that Seen never counts it.
const ForeignTopic = "foreign-engine"

// ForeignAppendAndExpire does what another engine's maintenance does to a
// HAADE table: it appends one row (a copy of the first, its kafka_topic
// set to ForeignTopic) in a snapshot without HAADE's summary keys, as
// Spark, pyiceberg or Trino would, and then expires every snapshot but
// that one. It returns the number of snapshots left.
func ForeignAppendAndExpire(ctx context.Context, cfg icebergio.CatalogConfig, ident string) (int, error) {
	cat, err := cfg.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer func() {
		if c, ok := cat.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	ns, name, ok := strings.Cut(ident, ".")
	if !ok {
		return 0, fmt.Errorf("table %q is not namespace.table", ident)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{ns, name})
	if err != nil {
		return 0, err
	}
	at, err := tbl.Scan(table.WithLimit(1)).ToArrowTable(ctx)
	if err != nil {
		return 0, err
	}
	defer at.Release()
	if at.NumRows() == 0 {
		return 0, fmt.Errorf("%s is empty", ident)
	}
	one, err := retopic(at)
	if err != nil {
		return 0, err
	}
	defer one.Release()
	tx := tbl.NewTransaction()
	if err := tx.AppendTable(ctx, one, 1, iceberg.Properties{"engine": "haade-faults-foreign"}); err != nil {
		return 0, fmt.Errorf("foreign append: %w", err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("foreign append: %w", err)
	}
	tx = tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(1)); err != nil {
		return 0, fmt.Errorf("expire snapshots: %w", err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("expire snapshots: %w", err)
	}
	return len(tbl.Metadata().Snapshots()), nil
}

// retopic returns the first row of at with kafka_topic replaced.
func retopic(at arrow.Table) (arrow.Table, error) {
	sc := at.Schema()
	idx := sc.FieldIndices("kafka_topic")
	if len(idx) != 1 {
		return nil, fmt.Errorf("no kafka_topic column")
	}
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		if i == idx[0] {
			switch sc.Field(i).Type.ID() {
			case arrow.STRING:
				b := array.NewStringBuilder(memory.DefaultAllocator)
				b.Append(ForeignTopic)
				cols[i] = b.NewArray()
				b.Release()
			case arrow.LARGE_STRING:
				b := array.NewLargeStringBuilder(memory.DefaultAllocator)
				b.Append(ForeignTopic)
				cols[i] = b.NewArray()
				b.Release()
			default:
				return nil, fmt.Errorf("kafka_topic is %s", sc.Field(i).Type)
			}
			continue
		}
		ch := at.Column(i).Data()
		if ch.Len() == 0 {
			return nil, fmt.Errorf("column %d has no chunks", i)
		}
		cols[i] = array.NewSlice(ch.Chunk(0), 0, 1)
	}
	rec := array.NewRecordBatch(sc, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec}), nil
}
