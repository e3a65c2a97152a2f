package snapshots

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"reflect"
	"sort"
	"time"

	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/offsets"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go/table"
)

func init() {
	register.DoFn5x2[context.Context, *sourceWatermark, *sdf.LockRTracker, []byte,
		func(beam.EventTime, SnapshotRows), sdf.ProcessContinuation, error](&snapshotsFn{})
	register.Emitter2[beam.EventTime, SnapshotRows]()
	beam.RegisterType(reflect.TypeOf((*SnapshotRows)(nil)).Elem())
}

// SnapshotRows is the element that ReadSnapshots emits: the rows that one
// append snapshot of the source table added, as an Arrow IPC stream. Its
// Range covers the sequence numbers from the previous append snapshot read
// (exclusive) to this one (inclusive), so the ranges tile and a downstream
// icebergio.Write records "every snapshot up to here is processed".
type SnapshotRows struct {
	Range      offsets.Range
	SnapshotID int64
	Rows       int64
	IPC        []byte
	// Members maps the source table's promoted columns to the members that
	// fill them (see PromotedProperty): Decode into a row type that lacks
	// such a column folds it into the row type's overflow under that name.
	// JSON text, "" for none (a string, not a map: see FinishBundle in
	// writer.go on nil fields through portable runners).
	Members string
}

// Decode appends the rows to *out, a pointer to a slice of a row struct
// (see rows.SchemaOf); columns are matched by name (see rows.Decode).
func (r SnapshotRows) Decode(out any) error { return rows.Decode(r.IPC, r.Members, out) }

// Source says which table ReadSnapshots reads and from where.
type Source struct {
	Catalog icebergio.CatalogConfig
	Ident   string
	// After is the sequence number after which to read: the next offset
	// recorded by the downstream table, minus one. 0 reads every snapshot.
	After int64
	// icebergio.Bounded reads up to the snapshot with sequence number Until, then
	// stops; use CurrentSequence for "what the table holds now". Otherwise
	// the read polls for new snapshots.
	Bounded bool
	Until   int64
	// Poll is how often an unbounded read looks for new snapshots. Default 5s.
	Poll time.Duration
}

// CurrentSequence returns the sequence number of the table's current
// snapshot (0 for an empty table).
func CurrentSequence(ctx context.Context, cat icebergio.CatalogConfig, ident string) (int64, error) {
	c, err := cat.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer icebergio.CloseCatalog(c)
	tbl, err := icebergio.LoadTable(ctx, c, ident)
	if err != nil {
		return 0, err
	}
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SequenceNumber, nil
	}
	return 0, nil
}

// ReadSnapshots reads the rows that append snapshots of src.Ident added,
// snapshot by snapshot in sequence order, and returns PCollection<SnapshotRows>.
// Element timestamps are processing time. A bounded read (src.Bounded) is
// a bounded PCollection; an unbounded one polls. Snapshots that are not appends
// (compaction, overwrite, delete) add no new rows and are stepped over.
// It resumes exactly-once when src.After comes from the downstream table's
// own offsets (icebergio.CommittedOffsets(...)[icebergio.SourceTopic(ident)][0] - 1).
// A clean stop of the process (runners.Stop) ends a read constructed before
// it after its current poll: it claims the rest of its restriction, its
// watermark goes to the end of time, and what it did not read stays for the
// next run.
func ReadSnapshots(s beam.Scope, src Source) beam.PCollection {
	s = s.Scope("snapshots.ReadSnapshots")
	end := int64(math.MaxInt64)
	if src.Bounded {
		end = max(src.Until, src.After) + 1
	}
	if src.Poll <= 0 {
		src.Poll = 5 * time.Second
	}
	imp := beam.Impulse(s)
	if src.Bounded {
		return beam.ParDo(s, &boundedSnapshotsFn{Catalog: src.Catalog, Ident: src.Ident, Start: src.After + 1, End: end,
			Constructed: time.Now().UnixNano()}, imp)
	}
	return beam.ParDo(s, &snapshotsFn{Catalog: src.Catalog, Ident: src.Ident, Start: src.After + 1, End: end, Poll: src.Poll,
		Constructed: time.Now().UnixNano()}, imp)
}

type snapshotsFn struct {
	Catalog     icebergio.CatalogConfig
	Ident       string
	Start, End  int64
	Poll        time.Duration
	Constructed int64 // unix nanos: a clean stop (internal/stop) after it stops the read
}

func (f *snapshotsFn) CreateInitialRestriction(_ []byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: f.Start, End: max(f.End, f.Start)}
}

func (f *snapshotsFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (f *snapshotsFn) RestrictionSize(_ []byte, r offsetrange.Restriction) float64 { return 1 }

func (f *snapshotsFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&splitAtPosition{offsetrange.NewTracker(r)})
}

func (f *snapshotsFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ offsetrange.Restriction, _ []byte) int64 {
	return int64(mtime.MinTimestamp)
}

func (f *snapshotsFn) CreateWatermarkEstimator(state int64) *sourceWatermark {
	return &sourceWatermark{state: state}
}

func (f *snapshotsFn) WatermarkEstimatorState(e *sourceWatermark) int64 { return e.state }

func (f *snapshotsFn) ProcessElement(ctx context.Context, we *sourceWatermark, rt *sdf.LockRTracker, _ []byte, emit func(beam.EventTime, SnapshotRows)) (sdf.ProcessContinuation, error) {
	r := rt.GetRestriction().(offsetrange.Restriction)
	if r.Start >= r.End {
		we.state = int64(mtime.MaxTimestamp)
		return sdf.StopProcessing(), nil
	}
	if stop.Stopped(f.Constructed) {
		rt.TryClaim(r.End - 1)
		we.state = int64(mtime.MaxTimestamp)
		return sdf.StopProcessing(), nil
	}
	next, err := f.read(ctx, r.Start, r.End, rt.TryClaim, emit)
	if err != nil || next < 0 {
		return sdf.StopProcessing(), err
	}
	if r.End != math.MaxInt64 {
		// Bounded: every snapshot up to the end is read.
		if next < r.End {
			rt.TryClaim(r.End - 1)
		}
		we.state = int64(mtime.MaxTimestamp)
		return sdf.StopProcessing(), nil
	}
	we.state = max(we.state, int64(mtime.Now()))
	return sdf.ResumeProcessingIn(f.Poll), nil
}

// read emits the append snapshots of [start, end) that claim accepts, in
// sequence order, and returns the sequence number after the last one
// emitted (start when none), or -1 when claim refused one.
func (f *snapshotsFn) read(ctx context.Context, start, end int64, claim func(any) bool, emit func(beam.EventTime, SnapshotRows)) (int64, error) {
	var tbl *table.Table
	err := icebergio.Retry(ctx, icebergio.Backoff{}, "load source table", f.Ident, func() error {
		cat, err := f.Catalog.OpenExisting(ctx)
		if err != nil {
			return err
		}
		defer icebergio.CloseCatalog(cat)
		tbl, err = icebergio.LoadTable(ctx, cat, f.Ident)
		return err
	})
	if err != nil {
		return 0, err
	}
	next := start
	for _, snap := range appendSnapshots(tbl, start, end) {
		if !claim(snap.SequenceNumber) {
			return -1, nil
		}
		out := SnapshotRows{Range: offsets.Range{Topic: icebergio.SourceTopic(f.Ident), Start: next, End: snap.SequenceNumber + 1}, SnapshotID: snap.SnapshotID}
		if m, err := rows.PromotedMembers(tbl); err != nil {
			return 0, err
		} else if len(m) > 0 {
			b, _ := json.Marshal(m)
			out.Members = string(b)
		}
		if err := icebergio.Retry(ctx, icebergio.Backoff{}, "read snapshot", f.Ident, func() error {
			var err error
			out.IPC, out.Rows, err = addedRows(ctx, tbl, snap)
			return err
		}); err != nil {
			return 0, err
		}
		next = out.Range.End
		emit(mtime.Now(), out)
	}
	return next, nil
}

// appendSnapshots lists the append snapshots of the main branch whose
// sequence numbers are in [from, to), oldest first.
func appendSnapshots(tbl *table.Table, from, to int64) []table.Snapshot {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	var out []table.Snapshot
	for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.SequenceNumber < from || s.SequenceNumber >= to {
			continue
		}
		if s.Summary != nil && s.Summary.Operation != table.OpAppend {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SequenceNumber < out[j].SequenceNumber })
	return out
}

// addedRows reads the rows that snapshot added, as one Arrow IPC stream in
// the table's current schema: files are matched to it by field id, so
// files written before a column was added (null there), renamed or widened
// read like the newest ones, and one snapshot may hold files of several
// schemas. Appended files carry no deletes.
func addedRows(ctx context.Context, tbl *table.Table, snap table.Snapshot) ([]byte, int64, error) {
	inc := tbl.NewIncrementalAppendScan()
	if snap.ParentSnapshotID != nil {
		inc = inc.FromSnapshotExclusive(*snap.ParentSnapshotID)
	} else {
		inc = inc.FromSnapshotInclusive(snap.SnapshotID)
	}
	tasks, err := inc.ToSnapshot(snap.SnapshotID).PlanFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	if len(tasks) == 0 {
		return nil, 0, nil
	}
	as, recs, err := tbl.Scan().ReadTasks(ctx, tasks)
	if err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(as))
	var rows int64
	for rec, err := range recs {
		if err != nil {
			return nil, 0, err
		}
		rows += rec.NumRows()
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			return nil, 0, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, 0, err
	}
	slog.Debug("read snapshot", "snapshot", snap.SnapshotID, "rows", rows)
	return buf.Bytes(), rows, nil
}

// sourceWatermark is the watermark of the single element of ReadSnapshots:
// the time its last poll ended (element timestamps are processing time).
type sourceWatermark struct{ state int64 }

func (e *sourceWatermark) CurrentWatermark() time.Time { return mtime.Time(e.state).ToTime() }

// splitAtPosition splits only at the current position, like the Kafka read.
type splitAtPosition struct{ *offsetrange.Tracker }

func (t *splitAtPosition) TrySplit(float64) (any, any, error) { return t.Tracker.TrySplit(0) }

func (t *splitAtPosition) IsBounded() bool {
	return t.GetRestriction().(offsetrange.Restriction).End != math.MaxInt64
}

// Progress is the progress a pipeline records once it has read src to its
// end (Until): the snapshot sequence numbers up to Until, as the offsets of
// partition 0 of icebergio.SourceTopic(src.Ident). A pipeline's overwrite
// (icebergio.OverwriteDays) records it with the rows it writes, and the
// next run's ResumeSource starts after it.
func (src Source) Progress() offsets.Offsets {
	p := offsets.Offsets{}
	p.Set(icebergio.SourceTopic(src.Ident), 0, src.Until+1)
	return p
}

// ChangedDays is the read side of a pipeline that recomputes whole days of
// its tables (sinks) from table ident: a bounded read of the snapshots
// appended to ident since the smallest progress the sinks hold
// (ResumeSource), and the days, by the timestamp column of row's type, that
// their rows fall in (TouchedDays). It returns PCollection<int64> of those
// days (days since the epoch, UTC), to read again with ReadDays or
// ReadDayBatches, and the progress that the sinks' overwrites record
// (Source.Progress).
func ChangedDays(ctx context.Context, s beam.Scope, cat icebergio.CatalogConfig, ident string, row any, column string, sinks ...*icebergio.Sink) (beam.PCollection, offsets.Offsets, error) {
	src, _, err := ResumeSource(ctx, cat, ident, true, sinks...)
	if err != nil {
		return beam.PCollection{}, nil, err
	}
	return TouchedDays(s, ReadSnapshots(s, src), row, column), src.Progress(), nil
}

// ResumeSource plans a read of table ident for a pipeline that writes the
// given sinks: it starts after the smallest source position the sinks hold
// (docs/DESIGN.md decision 3, with snapshot sequence numbers for offsets), and
// when bounded ends at the table's current snapshot. It returns the Source
// and the start offsets to pass to icebergio.Write.
func ResumeSource(ctx context.Context, cat icebergio.CatalogConfig, ident string, bounded bool, sinks ...*icebergio.Sink) (Source, offsets.Offsets, error) {
	topic := icebergio.SourceTopic(ident)
	var sets []offsets.Offsets
	for _, k := range sinks {
		sets = append(sets, k.Committed)
	}
	after := int64(0)
	if next, ok := offsets.Min(sets...).Next(topic, 0); ok {
		after = next - 1
	}
	src := Source{Catalog: cat, Ident: ident, After: after}
	if bounded {
		cur, err := CurrentSequence(ctx, cat, ident)
		if err != nil {
			return src, nil, err
		}
		src.Bounded, src.Until = true, max(cur, after)
	}
	start := offsets.Offsets{}
	start.Set(topic, 0, after+1)
	return src, start, nil
}
