package main

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	icemaint "github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/transforms/offsets"
)

// maintain runs the actions on one table, logging one line per action,
// and checks afterwards that every pipeline's offsets are unchanged.
func maintain(ctx context.Context, cat catalog.Catalog, ident string, opts icemaint.MaintainOptions) error {
	id, err := icebergio.Identifier(ident)
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return fmt.Errorf("--tables: %s: %w", ident, err)
	}
	before, err := icebergio.AllCommittedOffsets(tbl)
	if err != nil {
		return err
	}
	if _, err := icemaint.Maintain(ctx, cat, ident, opts, func(a icemaint.Action, r any) { logAction(ident, a, r) }); err != nil {
		return err
	}
	if tbl, err = cat.LoadTable(ctx, id); err != nil {
		return err
	}
	after, err := icebergio.AllCommittedOffsets(tbl)
	if err != nil {
		return err
	}
	// A pipeline committing meanwhile moves its offsets forward, never back.
	for p, o := range before {
		if moved := behind(after[p], o); moved != "" {
			return fmt.Errorf("%w: pipeline %s: %s", icemaint.ErrOffsetsChanged, p, moved)
		}
	}
	slog.Info("offsets kept", "table", ident, "pipelines", describe(after))
	return nil
}

// behind describes the first partition where now is behind was, or "".
func behind(now, was offsets.Offsets) string {
	for t, ps := range was {
		for p, v := range ps {
			if w, ok := now.Next(t, p); !ok || w < v {
				return fmt.Sprintf("%s/%d was %d, is %d", t, p, v, w)
			}
		}
	}
	return ""
}

func describe(all map[string]offsets.Offsets) string {
	var ps []string
	for p, o := range all {
		ps = append(ps, p+": "+strings.TrimSpace(o.String()))
	}
	sort.Strings(ps)
	return strings.Join(ps, "; ")
}

// logAction writes the one line of an action.
func logAction(ident string, a icemaint.Action, r any) {
	switch r := r.(type) {
	case icemaint.CompactReport:
		slog.Info(string(a), "table", ident, "groups", r.Groups, "files_removed", r.FilesRemoved,
			"files_added", r.FilesAdded, "bytes_before", r.BytesBefore, "bytes_after", r.BytesAfter,
			"data_files", r.DataFiles, "snapshot", r.Snapshot, "attempts", r.Attempts)
	case icemaint.ManifestsReport:
		slog.Info(string(a), "table", ident, "rewritten", r.Rewritten, "added", r.Added,
			"noop", r.NoOp, "snapshot", r.Snapshot, "attempts", r.Attempts)
	case icemaint.ExpireReport:
		var cps []string
		for p, id := range r.Checkpoints {
			cps = append(cps, fmt.Sprintf("%s=%d", p, id))
		}
		sort.Strings(cps)
		var rds []string
		for p, seq := range r.Readers {
			rds = append(rds, fmt.Sprintf("%s@%d", p, seq))
		}
		sort.Strings(rds)
		slog.Info(string(a), "table", ident, "snapshots_before", r.Before, "snapshots_after", r.After,
			"expired", r.Before-r.After, "retained_newest", r.Retained, "checkpoints", strings.Join(cps, ","),
			"readers", strings.Join(rds, ","), "attempts", r.Attempts)
	case icemaint.OrphanReport:
		slog.Info(string(a), "table", ident, "orphans", r.Found, "deleted", r.Deleted, "bytes", r.Bytes)
	}
}

// closeCatalog releases a catalog's resources, if it holds any.
func closeCatalog(cat catalog.Catalog) {
	if c, ok := cat.(catalog.Closer); ok {
		_ = c.Close()
	}
}
