package icebergio_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
)

// The spike of the upsert issue: which public iceberg-go v0.7.0 path makes
// a window's new rows and the deletes of the rows they replace visible
// together. ReplaceFilesWithDeleteFiles refuses to add a delete file
// without removing one ("adding delete files requires replacing at least
// one existing delete file"): it is for rewrites, not a RowDelta. What
// works: Delete (merge-on-read: position deletes of the rows the filter
// matches, found by scanning the candidate files) and then AddDataFiles,
// in one transaction. That is one catalog commit and two snapshots, the
// delete's and the append's: a reader of the table's current snapshot
// sees both or neither; a reader of the snapshot between them (time
// travel, an incremental read of each snapshot) sees the old rows gone and
// the new ones not yet there.
func TestDeleteThenAppendIsOneCommit(t *testing.T) {
	ctx := context.Background()
	_, cat := icebergtest.Catalog(t)
	tt := tables.Table{Ident: "lakehouse.upsert_spike", Row: Row{}, Properties: map[string]string{
		"format-version": "2", "write.delete.mode": "merge-on-read"}}
	if _, err := icebergio.EnsureTable(ctx, cat, tt); err != nil {
		t.Fatal(err)
	}
	tbl := icebergtest.Load(t, cat, tt.Ident)
	var first []Row
	for k := range 10 {
		first = append(first, Row{Key: fmt.Sprint("k", k), At: 1, Topic: topic, Offset: int64(k)})
	}
	tbl = icebergtest.Append(t, tbl, first, nil)

	// Window 2 updates k2, k5 and k7.
	var second []Row
	for i, k := range []int{2, 5, 7} {
		second = append(second, Row{Key: fmt.Sprint("k", k), At: 2, Topic: topic, Offset: int64(10 + i)})
	}
	files := writeDataFiles(t, tbl, second)
	logBefore := len(slices.Collect(tbl.Metadata().PreviousFiles()))
	snapsBefore := len(tbl.Metadata().Snapshots())
	tx := tbl.NewTransaction()
	keys := []string{"k2", "k5", "k7"}
	if err := tx.Delete(ctx, iceberg.IsIn(iceberg.Reference("key"), keys...), iceberg.Properties{"haade.window": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.AddDataFiles(ctx, files, iceberg.Properties{"haade.window": "2"}); err != nil {
		t.Fatal(err)
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(slices.Collect(after.Metadata().PreviousFiles())) - logBefore; got != 1 {
		t.Errorf("the transaction wrote %d metadata files, want 1 (one catalog commit)", got)
	}
	snaps := after.Metadata().Snapshots()[snapsBefore:]
	var ops []string
	for _, s := range snaps {
		ops = append(ops, string(s.Summary.Operation))
	}
	if diff := cmp.Diff([]string{"delete", "append"}, ops); diff != "" {
		t.Errorf("snapshots of the transaction (-want +got):\n%s", diff)
	}
	// Merge-on-read: the delete adds a position delete file and rewrites
	// no data file.
	if sum := snaps[0].Summary.Properties; sum["added-position-delete-files"] != "1" || sum["deleted-data-files"] != "" || sum["added-data-files"] != "" {
		t.Errorf("the delete's summary %v: want one position delete file and no data file added or removed", sum)
	}
	latest := map[string]int64{}
	for _, r := range icebergtest.Rows[Row](t, cat, tt.Ident) {
		if _, dup := latest[r.Key]; dup {
			t.Errorf("key %s twice", r.Key)
		}
		latest[r.Key] = r.At
	}
	want := map[string]int64{}
	for k := range 10 {
		want[fmt.Sprint("k", k)] = 1
	}
	for _, k := range keys {
		want[k] = 2
	}
	if diff := cmp.Diff(want, latest); diff != "" {
		t.Errorf("current snapshot: key -> at (-want +got):\n%s", diff)
	}
	// Between the two snapshots: the updated keys are gone.
	mid := rowsAt(t, after, snaps[0].SnapshotID)
	if got, want := len(mid), 7; got != want {
		t.Errorf("the delete's snapshot holds %d rows, want %d", got, want)
	}
	if slices.ContainsFunc(mid, func(r Row) bool { return slices.Contains(keys, r.Key) }) {
		t.Errorf("the delete's snapshot still holds an updated key: %v", mid)
	}
}

// writeDataFiles writes rows into data files of tbl without committing
// them, as a HAADE writer does.
func writeDataFiles(t *testing.T, tbl *table.Table, rows []Row) []iceberg.DataFile {
	t.Helper()
	rec := icebergtest.Record(t, tbl, rows)
	defer rec.Release()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	seq := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	for df, err := range table.WriteRecords(context.Background(), tbl, sc, seq) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, df)
	}
	return out
}

// rowsAt reads the rows of snapshot id of tbl.
func rowsAt(t *testing.T, tbl *table.Table, id int64) []Row {
	t.Helper()
	sc := tbl.Scan(table.WithSnapshotID(id))
	_, itr, err := sc.ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []Row
	for rec, err := range itr {
		if err != nil {
			t.Fatal(err)
		}
		keys := rec.Column(int(rec.Schema().FieldIndices("key")[0])).(*array.String)
		for i := range keys.Len() {
			out = append(out, Row{Key: keys.Value(i)})
		}
		rec.Release()
	}
	return out
}
