package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
)

// count prints the number of rows of the table's current snapshot: the
// data files' record counts, or a scan when delete files apply.
func (q *query) count(ctx context.Context) error {
	tbl, err := q.load(ctx)
	if err != nil {
		return err
	}
	n, err := countRows(ctx, tbl)
	if err != nil {
		return err
	}
	fmt.Fprintln(q.out, n)
	return nil
}

func countRows(ctx context.Context, tbl *table.Table) (int64, error) {
	if tbl.CurrentSnapshot() == nil {
		return 0, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return scanCount(ctx, tbl)
		}
		n += t.File.Count()
	}
	return n, nil
}

func scanCount(ctx context.Context, tbl *table.Table) (int64, error) {
	_, recs, err := tbl.Scan(table.WithSelectedFields(tbl.Schema().Fields()[0].Name)).ToArrowRecords(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for rec, err := range recs {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}

// head prints the first -n rows of the table, every column, as an aligned
// text table, then how many rows it showed of how many.
func (q *query) head(ctx context.Context) error {
	tbl, err := q.load(ctx)
	if err != nil {
		return err
	}
	header := make([]string, 0, len(tbl.Schema().Fields()))
	for _, f := range tbl.Schema().Fields() {
		header = append(header, f.Name)
	}
	rows := [][]string{header}
	if tbl.CurrentSnapshot() != nil && q.cfg.N > 0 {
		_, recs, err := tbl.Scan(table.WithLimit(int64(q.cfg.N))).ToArrowRecords(ctx)
		if err != nil {
			return err
		}
		for rec, err := range recs {
			if err != nil {
				return err
			}
			rows = appendRows(rows, rec, header, q.cfg.N+1, q.cfg.Width)
			rec.Release()
			if len(rows) > q.cfg.N {
				break
			}
		}
	}
	if err := writeTable(q.out, rows, q.cfg.Width); err != nil {
		return err
	}
	total, err := countRows(ctx, tbl)
	if err != nil {
		return err
	}
	fmt.Fprintf(q.out, "(%d of %d rows)\n", len(rows)-1, total)
	return nil
}

// appendRows formats the rows of rec, columns in header order, until rows
// holds limit lines (header included).
func appendRows(rows [][]string, rec arrow.RecordBatch, header []string, limit, width int) [][]string {
	cols := make([]arrow.Array, len(header))
	for i, name := range header {
		if idx := rec.Schema().FieldIndices(name); len(idx) > 0 {
			cols[i] = rec.Column(idx[0])
		}
	}
	for r := 0; r < int(rec.NumRows()) && len(rows) < limit; r++ {
		line := make([]string, len(cols))
		for i, c := range cols {
			if c == nil {
				line[i] = "?"
				continue
			}
			line[i] = cell(c, r)
		}
		rows = append(rows, line)
	}
	return rows
}
