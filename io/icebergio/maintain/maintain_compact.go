package maintain

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/haade/haade/io/icebergio"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
)

// CompactOptions configures Compact. Zero values are safe.
type CompactOptions struct {
	// TargetFileSize is the size of the files compaction writes, in bytes.
	// Files below 75% of it are rewritten, files above 180% left alone.
	// Default: the table's write.target-file-size-bytes, else 512 MiB.
	TargetFileSize int64
	// MinInputFiles is the fewest small files of one partition worth
	// rewriting together. Default 5 (compaction.DefaultMinInputFiles).
	MinInputFiles int
}

// CompactReport is what Compact did.
type CompactReport struct {
	Groups       int   // groups of small files rewritten, each within a partition
	FilesRemoved int   // small data files replaced
	FilesAdded   int   // data files written in their place
	BytesBefore  int64 // size of the files replaced
	BytesAfter   int64 // size of the files written
	DataFiles    int64 // data files of the table afterwards
	Snapshot     int64 // the rewrite snapshot, 0 when nothing was rewritten
	Attempts     int   // commits tried (more than 1 after conflicts)
}

// Compact rewrites the small data files of table ident into files of the
// target size, partition by partition, in one "replace" snapshot. The rows
// are unchanged. The snapshot's summary carries the haade.* keys (pipeline,
// window end, offsets) of the newest snapshot that had them, so that it is
// itself a checkpoint, plus SummaryMaintenance.
//
// The new files are written once. A commit that conflicts with a
// concurrent one (a pipeline's window) reloads the table and stages the
// same files again on top of it, with that table's haade keys; it gives up
// only when the files it replaces are gone (another compaction won), and
// then removes the files it wrote.
func Compact(ctx context.Context, cat catalog.Catalog, ident string, opts CompactOptions, b icebergio.Backoff) (CompactReport, error) {
	var rep CompactReport
	tbl, err := loadRetry(ctx, cat, ident, b)
	if err != nil {
		return rep, err
	}
	if tbl.CurrentSnapshot() == nil {
		return rep, nil
	}
	cfg := compactionConfig(tbl, opts)
	plan, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil {
		return rep, err
	}
	rep.DataFiles = int64(plan.TotalInputFiles)
	if len(plan.Groups) == 0 {
		return rep, nil
	}
	var results []table.CompactionGroupResult
	for _, g := range plan.Groups {
		gr, err := table.ExecuteCompactionGroup(ctx, tbl,
			table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes},
			table.WithCompactionTargetFileSize(cfg.TargetFileSizeBytes))
		results = append(results, gr)
		if err != nil {
			removeNewFiles(tbl, results)
			return rep, fmt.Errorf("rewrite group %s: %w", g.PartitionKey, err)
		}
	}

	id := runID(ActionCompact)
	var committed *table.Table
	// uncertain is set once a commit failed in a way that does not prove
	// the catalog refused it: from then on the new files may be live.
	uncertain := false
	err = icebergio.Retry(ctx, b, "compact", ident, func() error {
		rep.Attempts++
		cur, err := loadExisting(ctx, cat, ident)
		if err != nil {
			return err
		}
		if committedBy(cur, id) {
			// An attempt whose outcome was unknown did commit.
			committed = cur
			return nil
		}
		props := iceberg.Properties{SummaryMaintenance: id}
		for k, v := range newestOffsetsSnapshot(cur) {
			props[k] = v
		}
		tx := cur.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return err
		}
		rw := tx.NewRewrite(props)
		for _, gr := range results {
			rw.ApplyResult(gr)
		}
		if err := rw.Commit(ctx); err != nil {
			if strings.Contains(err.Error(), "do not belong to the table") {
				return icebergio.Permanent(fmt.Errorf("files to replace are gone (another compaction?): %w", err))
			}
			return err
		}
		if err := checkOffsetsKept(cur, tx); err != nil {
			return icebergio.Permanent(err)
		}
		nt, err := icebergio.CommitPinned(ctx, ident, tx)
		if err != nil {
			if !icebergio.IsConflict(err) {
				uncertain = true
			}
			return err
		}
		committed = nt
		return nil
	})
	if err != nil {
		if !uncertain {
			// icebergio.Every commit was refused: the new files are ours to remove.
			removeNewFiles(tbl, results)
		}
		// Otherwise one may have landed: leave the files to orphan cleanup
		// rather than risk removing live ones.
		return rep, err
	}
	for _, gr := range results {
		rep.Groups++
		rep.FilesRemoved += len(gr.OldDataFiles)
		rep.FilesAdded += len(gr.NewDataFiles)
		rep.BytesBefore += gr.BytesBefore
		rep.BytesAfter += gr.BytesAfter
	}
	if s := committed.CurrentSnapshot(); s != nil {
		rep.Snapshot = s.SnapshotID
		if s.Summary != nil {
			rep.DataFiles, _ = strconv.ParseInt(s.Summary.Properties["total-data-files"], 10, 64)
		}
	}
	return rep, nil
}

// compactionConfig sizes compaction around the target file size, as
// iceberg's defaults do: rewrite below 75% of it, never above 180%.
func compactionConfig(tbl *table.Table, opts CompactOptions) compaction.Config {
	cfg := compaction.DefaultConfig()
	target := opts.TargetFileSize
	if target <= 0 {
		target = int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
	}
	cfg.TargetFileSizeBytes = target
	cfg.MinFileSizeBytes = target * 3 / 4
	cfg.MaxFileSizeBytes = target * 9 / 5
	if opts.MinInputFiles > 0 {
		cfg.MinInputFiles = uint(opts.MinInputFiles)
	}
	return cfg
}

// removeNewFiles removes data files that compaction wrote and never
// committed. Failures are left to orphan cleanup.
func removeNewFiles(tbl *table.Table, results []table.CompactionGroupResult) {
	fs, err := tbl.FS(context.Background())
	if err != nil {
		return
	}
	for _, gr := range results {
		for _, df := range gr.NewDataFiles {
			_ = fs.Remove(df.FilePath())
		}
	}
}

// loadRetry loads a table, retrying while the catalog is away. A table
// that does not exist is an error at once.
func loadRetry(ctx context.Context, cat catalog.Catalog, ident string, b icebergio.Backoff) (*table.Table, error) {
	var tbl *table.Table
	err := icebergio.Retry(ctx, b, "load table", ident, func() error {
		var err error
		tbl, err = loadExisting(ctx, cat, ident)
		return err
	})
	return tbl, err
}

// loadExisting loads a table; inside retry, a missing table is permanent.
func loadExisting(ctx context.Context, cat catalog.Catalog, ident string) (*table.Table, error) {
	id, err := icebergio.Identifier(ident)
	if err != nil {
		return nil, icebergio.Permanent(err)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, icebergio.Permanent(fmt.Errorf("%w: table %s does not exist", icebergio.ErrCatalog, ident))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: load table %s: %v", icebergio.ErrCatalog, ident, err)
	}
	return tbl, nil
}
