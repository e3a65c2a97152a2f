package icebergio

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/transforms/offsets"
)

// Commit reports what the committer did with one window.
type Commit struct {
	Table      string
	WindowEnd  int64
	SnapshotID int64 // 0 when no snapshot was made
	Rows       int64
	Files      int64
	// Outcome is "committed", "empty" (offsets advanced, no rows, no
	// snapshot), "duplicate" (already in the table: skipped) or "replayed"
	// (the window's token was already in the table's history).
	Outcome string
	Offsets string
}

// windowState classifies a window against the offsets the table holds.
type windowState int

const (
	windowReady     windowState = iota // continues every partition's offsets
	windowWaiting                      // an earlier window has not arrived yet
	windowDuplicate                    // wholly in the table already
)

// classify checks a window's ranges against running, the offsets that the
// table holds plus those that earlier empty windows advanced. Start gives
// the first offset of partitions that running does not know.
func classify(w FileSet, running, start offsets.Offsets) (windowState, error) {
	type span struct{ lo, hi int64 }
	spans := map[string]map[int32]*span{}
	rs := append([]offsets.Range(nil), w.Ranges...)
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Topic != rs[j].Topic {
			return rs[i].Topic < rs[j].Topic
		}
		if rs[i].Partition != rs[j].Partition {
			return rs[i].Partition < rs[j].Partition
		}
		return rs[i].Start < rs[j].Start
	})
	for _, r := range rs {
		if spans[r.Topic] == nil {
			spans[r.Topic] = map[int32]*span{}
		}
		s := spans[r.Topic][r.Partition]
		if s == nil {
			spans[r.Topic][r.Partition] = &span{r.Start, r.End}
			continue
		}
		if r.Start != s.hi {
			return 0, fmt.Errorf("%w: window %s of %s has a hole in %s/%d at %d..%d", ErrOffsetsOverlap, w.end().Format(time.RFC3339), w.Table, r.Topic, r.Partition, s.hi, r.Start)
		}
		s.hi = r.End
	}
	ready, dup := 0, 0
	for t, ps := range spans {
		for p, s := range ps {
			next, ok := running.Next(t, p)
			if !ok {
				next, ok = start.Next(t, p)
			}
			switch {
			case !ok || s.lo == next:
				ready++
			case s.hi <= next:
				dup++
			case s.lo > next:
				return windowWaiting, nil
			default:
				return 0, fmt.Errorf("%w: window %s of %s covers %s/%d[%d,%d) but the table holds up to %d", ErrOffsetsOverlap, w.end().Format(time.RFC3339), w.Table, t, p, s.lo, s.hi, next)
			}
		}
	}
	if ready == 0 {
		return windowDuplicate, nil
	}
	if dup > 0 {
		return 0, fmt.Errorf("%w: window %s of %s is partly in the table already", ErrOffsetsOverlap, w.end().Format(time.RFC3339), w.Table)
	}
	return windowReady, nil
}

// committer commits windows of one table, in window order, one snapshot
// per window that has rows. It keeps no state of its own: the caller passes
// the pending windows and the running offsets, and stores what it returns.
type committer struct {
	cat      catalog.Catalog
	ident    string
	pipeline string
	start    offsets.Offsets
	// ids are the current Kafka topic ids, recorded with every commit.
	ids     TopicIDs
	backoff Backoff
	// progressEvery is how often offsets advanced by windows without rows
	// are recorded in the table's progress property. Default 1 minute.
	progressEvery time.Duration
	// open, when set, opens the catalog again after a failure: a
	// connection that failed (a SQLite file opened read-only, a database
	// that restarted) is not reused for ever. See reopen.go.
	open func(context.Context) (catalog.Catalog, error)
	// stale is set when the last catalog call failed: the next one reopens.
	stale bool
	// beforeCommit, when set, runs after the files are decoded and before
	// the snapshot is committed; tests use it to inject crashes.
	beforeCommit func(FileSet) error
	// upsertKey, upsertPartition and upsertOffset are set for an upsert
	// table (see Upsert).
	upsertKey, upsertPartition, upsertOffset string
}

// process commits every pending window that is ready, in window order, and
// returns the windows still waiting and the new running offsets.
func (c *committer) process(ctx context.Context, pending []FileSet, running offsets.Offsets) ([]FileSet, offsets.Offsets, []Commit, error) {
	sort.SliceStable(pending, func(i, j int) bool { return pending[i].WindowEnd < pending[j].WindowEnd })
	// The table may hold more than running says: another attempt of this
	// job may have committed after the runner checkpoint that running
	// comes from. The table wins.
	tbl, err := c.load(ctx)
	if err != nil {
		return pending, running, nil, err
	}
	committed, durableAt, _, err := committedOffsets(tbl, c.pipeline, c.ids)
	if err != nil {
		return pending, running, nil, err
	}
	if running == nil {
		running = offsets.Offsets{}
	}
	running = running.Clone()
	running.Max(committed)

	var done []Commit
	for len(pending) > 0 {
		// The first window, in window order, that continues the offsets.
		// Usually pending[0]; but a late pane of an earlier window (files
		// of a bundle that ended after the watermark passed its window)
		// can arrive after the window it must precede, with the same or a
		// later window end. Every window that commits continues every
		// partition's offsets exactly, so the commit order of windows is
		// that of the offsets, whatever their window ends.
		i, st := -1, windowWaiting
		for j := range pending {
			s, err := classify(pending[j], running, c.start)
			if err != nil {
				return pending, running, done, err
			}
			if s != windowWaiting {
				i, st = j, s
				break
			}
		}
		if i < 0 {
			slog.Info("windows wait for an earlier one", "table", c.ident, "windows", len(pending), "first_window_end", pending[0].end())
			break
		}
		w := pending[i]
		pending = append(pending[:i:i], pending[i+1:]...)
		res := Commit{Table: c.ident, WindowEnd: w.WindowEnd, Rows: w.Rows, Files: int64(len(w.Files))}
		switch {
		case st == windowDuplicate:
			res.Outcome = "duplicate"
		case len(w.Files) == 0 && w.Rows > 0:
			// Rows without a data file: the writers lost them (a write
			// that failed without an error). Advancing the offsets would
			// lose them for good; refuse, loudly.
			return append([]FileSet{w}, pending...), running, done, fmt.Errorf("%w: window %s of %s has %d rows but no data file", ErrLostRows, w.end().Format(time.RFC3339), c.ident, w.Rows)
		case len(w.Files) == 0 && len(w.Keys) == 0:
			running.Advance(w.Ranges...) // running is this call's own copy
			res.Outcome = "empty"
		default:
			next := running.Clone()
			next.Advance(w.Ranges...)
			id, replayed, err := c.commit(ctx, w, next)
			if err != nil {
				return append([]FileSet{w}, pending...), running, done, err
			}
			running = next
			res.SnapshotID = id
			res.Outcome = "committed"
			if replayed {
				res.Outcome = "replayed"
			}
		}
		res.Offsets = running.String()
		done = append(done, res)
		commits.WithLabelValues(c.ident, res.Outcome).Inc()
		if res.Outcome == "empty" || res.Outcome == "duplicate" {
			// The table is current with this window: nothing in it was
			// for the table, or it is there already. The "seconds since the
			// last commit" clock restarts, as after a commit, so that a
			// table that seldom gets rows (the dead letters') does not look
			// stuck while its pipeline runs.
			sinceCommit.mark(c.ident, time.Now())
		}
		if res.Outcome == "empty" && running.Ahead(committed) && time.Since(durableAt) >= c.progressInterval() {
			if err := c.recordProgress(ctx, running); err != nil {
				return pending, running, done, err
			}
			committed, durableAt = running.Clone(), time.Now()
		}
	}
	return pending, running, done, nil
}

func (c *committer) progressInterval() time.Duration {
	if c.progressEvery <= 0 {
		return time.Minute
	}
	return c.progressEvery
}

// recordProgress stores next in the table's progress property, in a
// metadata-only commit: no snapshot. Every window up to these offsets is in
// the table or had no rows for it.
func (c *committer) recordProgress(ctx context.Context, next offsets.Offsets) error {
	return Retry(ctx, c.backoff, "record progress", c.ident, func() error {
		tbl, err := c.LoadTable(ctx)
		if err != nil {
			return err
		}
		cur, _, _, err := committedOffsets(tbl, c.pipeline, c.ids)
		if err != nil {
			return Permanent(err)
		}
		if !next.Ahead(cur) {
			return nil
		}
		tx, err := pinned(tbl)
		if err != nil {
			return err
		}
		if err := tx.SetProperties(c.progress(next)); err != nil {
			return err
		}
		_, err = tx.Commit(ctx)
		if err == nil {
			slog.Info("recorded progress", "table", c.ident, "offsets", next.String())
		} else if !IsConflict(err) {
			c.stale = true
		}
		return err
	})
}

// progress is the table property update that records next (see
// ProgressProperty).
func (c *committer) progress(next offsets.Offsets) iceberg.Properties {
	v, _ := json.Marshal(progress{Offsets: next, At: time.Now().UnixMilli(), TopicIDs: c.ids})
	return iceberg.Properties{ProgressProperty(c.pipeline): string(v)}
}

func (c *committer) load(ctx context.Context) (*table.Table, error) {
	var tbl *table.Table
	err := Retry(ctx, c.backoff, "load table", c.ident, func() error {
		var err error
		tbl, err = c.LoadTable(ctx)
		return err
	})
	return tbl, err
}

// stage adds the window's files to tx; for an upsert table, between the
// deletes of the rows they replace (see Upsert): copy-on-write, each data
// file that holds one of them is rewritten without it.
func (c *committer) stage(ctx context.Context, tx *table.Transaction, tbl *table.Table, w FileSet, files []iceberg.DataFile, props iceberg.Properties) error {
	if c.upsertKey == "" {
		return tx.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck())
	}
	binary := false
	if f, ok := tbl.Schema().FindFieldByName(c.upsertKey); ok {
		_, binary = f.Type.(iceberg.BinaryType)
	}
	keys, losers := upsertFilters(w.Keys, c.upsertKey, c.upsertPartition, c.upsertOffset, binary)
	if keys != nil && tbl.CurrentSnapshot() != nil {
		if err := tx.Delete(ctx, keys, props); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		if err := tx.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck()); err != nil {
			return err
		}
	}
	if losers != nil {
		if err := tx.Delete(ctx, losers, props); err != nil {
			return err
		}
	}
	return nil
}

// upsertFilters returns, for a window's keys, the filter of every row of
// those keys (the live rows the window replaces or deletes) and the filter
// of the window's own rows that are not their key's latest (nil when there
// is none): a key in the window twice, or written and then deleted. A key
// column of type binary compares bytes (a Kafka key), any other its text.
//
// The second filter is "key in the stale keys, and (partition, offset) one
// of theirs", written as one set of offsets per source partition: a record
// is one (partition, offset), and the first filter has already deleted
// every older row of those keys, so it matches the stale rows and no
// other. Its size is the number of partitions, not of keys: an OR of one
// term per key is evaluated term by term on every row, and at 2,000 keys
// took most of a window's commit (arrow's scalar executor).
func upsertFilters(refs []KeyRef, keyCol, partCol, offCol string, binary bool) (keys, losers iceberg.BooleanExpression) {
	if len(refs) == 0 {
		return nil, nil
	}
	latest := map[string]KeyRef{}
	for _, r := range refs {
		if l, ok := latest[r.Key]; !ok || r.Offset > l.Offset || (r.Offset == l.Offset && r.Partition > l.Partition) {
			latest[r.Key] = r
		}
	}
	names := make([]string, 0, len(latest))
	for k := range latest {
		names = append(names, k)
	}
	sort.Strings(names)
	keys = keyIn(keyCol, binary, names)
	staleKeys := map[string]bool{}
	stale := map[int32][]int64{} // partition -> offsets of stale rows
	for _, r := range refs {
		if !r.Delete && r != latest[r.Key] {
			staleKeys[r.Key] = true
			stale[r.Partition] = append(stale[r.Partition], r.Offset)
		}
	}
	if len(stale) == 0 {
		return keys, nil
	}
	names = names[:0]
	for k := range staleKeys {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]int32, 0, len(stale))
	for p := range stale {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	var at iceberg.BooleanExpression
	for _, p := range parts {
		slices.Sort(stale[p])
		e := iceberg.NewAnd(iceberg.EqualTo(iceberg.Reference(partCol), p), iceberg.IsIn(iceberg.Reference(offCol), stale[p]...))
		if at == nil {
			at = e
		} else {
			at = iceberg.NewOr(at, e)
		}
	}
	return keys, iceberg.NewAnd(keyIn(keyCol, binary, names), at)
}

// keyIn is the filter "column in keys", of binary literals when binary.
func keyIn(col string, binary bool, keys []string) iceberg.BooleanExpression {
	if !binary {
		return iceberg.IsIn(iceberg.Reference(col), keys...)
	}
	bs := make([][]byte, len(keys))
	for i, k := range keys {
		bs[i] = []byte(k)
	}
	return iceberg.IsIn(iceberg.Reference(col), bs...)
}

// commit makes one snapshot of the window's files, whose summary carries the
// offsets next. A conflict or a transient error means reload and retry; a
// window whose token is in the table's history already is not committed
// again (replayed is then true).
func (c *committer) commit(ctx context.Context, w FileSet, next offsets.Offsets) (id int64, replayed bool, err error) {
	props := iceberg.Properties{
		SummaryPipeline:  c.pipeline,
		SummaryWindowEnd: w.end().Format(time.RFC3339Nano),
		SummaryOffsets:   next.Encode(),
	}
	if len(c.ids) > 0 {
		props[SummaryTopicIDs] = c.ids.encode()
	}
	started := time.Now()
	err = Retry(ctx, c.backoff, "commit", c.ident, func() error {
		tbl, err := c.LoadTable(ctx)
		if err != nil {
			return err
		}
		if windowCommitted(tbl, c.pipeline, w.end(), props[SummaryOffsets], props[SummaryTopicIDs]) {
			replayed = true
			id = tbl.CurrentSnapshot().SnapshotID
			return nil
		}
		// Another attempt of this pipeline may have committed meanwhile:
		// never commit rows the table already holds.
		cur, _, _, err := committedOffsets(tbl, c.pipeline, c.ids)
		if err != nil {
			return Permanent(err)
		}
		if st, err := classify(w, cur, offsets.Offsets{}); err != nil {
			return Permanent(err)
		} else if st == windowDuplicate {
			replayed = true
			id = tbl.CurrentSnapshot().SnapshotID
			return nil
		}
		// Keep what the table holds for partitions this window does not
		// cover: after a conflict, the commit that won may have advanced
		// them (an earlier window of other partitions), and the summary
		// must never move an offset back, or a restart reads those rows
		// again. next is the caller's running offsets from here on.
		next.Max(cur)
		props[SummaryOffsets] = next.Encode()
		files := make([]iceberg.DataFile, 0, len(w.Files))
		for _, enc := range w.Files {
			df, err := codec.DecodeDataFile(enc, tbl.Spec(), tbl.Schema(), tbl.Metadata().Version())
			if err != nil {
				return Permanent(fmt.Errorf("icebergio: decode data file for %s: %w", c.ident, err))
			}
			files = append(files, df)
		}
		if c.beforeCommit != nil {
			if err := c.beforeCommit(w); err != nil {
				return Permanent(err)
			}
		}
		// The offsets go into the snapshot summary and, in the same
		// transaction, into the progress property, which no snapshot
		// expiry removes.
		tx, err := pinned(tbl)
		if err != nil {
			return err
		}
		if err := tx.SetProperties(c.progress(next)); err != nil {
			return err
		}
		if err := c.stage(ctx, tx, tbl, w, files, props); err != nil {
			return err
		}
		nt, err := tx.Commit(ctx)
		if err != nil {
			if IsConflict(err) {
				commitConflicts.WithLabelValues(c.ident).Inc()
				slog.Warn("commit conflict, reloading", "table", c.ident, "err", err)
			} else {
				c.stale = true
			}
			return err
		}
		id = nt.CurrentSnapshot().SnapshotID
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	now := time.Now()
	commitDuration.WithLabelValues(c.ident).Observe(now.Sub(started).Seconds())
	commitSucceeded(c.ident, now)
	for _, ms := range []int64{w.MinSourceMs, w.MaxSourceMs} {
		if ms > 0 {
			freshness.WithLabelValues(c.ident).Observe(now.Sub(time.UnixMilli(ms)).Seconds())
		}
	}
	slog.Info("committed", "table", c.ident, "window_end", w.end(), "rows", w.Rows, "files", len(w.Files),
		"bytes", w.Bytes, "duration", time.Since(started).Round(time.Millisecond), "snapshot", id,
		"replayed", replayed, "offsets", next.String())
	return id, replayed, nil
}
