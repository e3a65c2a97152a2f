package maintain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/haade/haade/io/icebergio"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Errors returned by table maintenance.
var (
	// ErrUnsafeOrphanAge is returned when orphan files younger than an hour
	// would be deleted: a writer's files wait that long for their commit.
	ErrUnsafeOrphanAge = errors.New("icebergio: orphan age below 1h is unsafe")

	// ErrOffsetsChanged is returned, before anything is committed, when a
	// maintenance commit would change the offsets a pipeline reads from the
	// table. It never should; it guards the exactly-once contract.
	ErrOffsetsChanged = errors.New("icebergio: maintenance would change committed offsets")
)

// SummaryMaintenance marks a snapshot made by table maintenance; its value
// is unique per run, so that a retry can tell its own commit.
const SummaryMaintenance = "haade.maintenance"

// MinOrphanAge is the youngest --orphan-older-than that DeleteOrphans accepts.
const MinOrphanAge = time.Hour

// Action names one maintenance action.
type Action string

const (
	ActionCompact          Action = "compact"
	ActionRewriteManifests Action = "rewrite-manifests"
	ActionExpireSnapshots  Action = "expire-snapshots"
	ActionDeleteOrphans    Action = "delete-orphans"
)

// Actions lists every action, in the order Maintain runs them.
var Actions = []Action{ActionCompact, ActionRewriteManifests, ActionExpireSnapshots, ActionDeleteOrphans}

// MaintainOptions configures Maintain. Zero values are safe.
type MaintainOptions struct {
	// Actions to run, always in the order of Actions. Default: all.
	Actions []Action
	// Compact configures compaction.
	Compact CompactOptions
	// ExpireOlderThan is the age past which snapshots may be expired.
	// Default 24h.
	ExpireOlderThan time.Duration
	// RetainLast is how many of the newest snapshots are always kept.
	// Default 10. The newest snapshot carrying each pipeline's offsets, and
	// every snapshot after it, are kept whatever these two say.
	RetainLast int
	// OrphanOlderThan is the age past which files that no snapshot
	// references are deleted. Default 72h; below MinOrphanAge is an error.
	OrphanOlderThan time.Duration
	// icebergio.Backoff bounds the waits between retries after a conflict with a
	// concurrent commit. Default 100ms to 30s; retries go on until the
	// context ends.
	Backoff icebergio.Backoff
}

func (o MaintainOptions) withDefaults() MaintainOptions {
	if len(o.Actions) == 0 {
		o.Actions = Actions
	}
	if o.ExpireOlderThan <= 0 {
		o.ExpireOlderThan = 24 * time.Hour
	}
	if o.RetainLast <= 0 {
		o.RetainLast = 10
	}
	if o.OrphanOlderThan == 0 {
		o.OrphanOlderThan = 72 * time.Hour
	}
	return o
}

// MaintainReport is what Maintain did to one table.
type MaintainReport struct {
	Table     string
	Compact   *CompactReport   // nil when not run
	Manifests *ManifestsReport // nil when not run
	Expire    *ExpireReport    // nil when not run
	Orphans   *OrphanReport    // nil when not run
}

// Maintain runs the maintenance actions on table ident, in the order of
// Actions: compaction, manifest rewrite, snapshot expiry, orphan cleanup.
// It is safe while pipelines commit to the table: a conflict means reload
// and retry, and no action changes the offsets that icebergio.CommittedOffsets
// returns for any pipeline. It stops at the first action that fails;
// report holds the actions done so far. each, when not nil, is called
// after each action with its report (for one log line per action).
func Maintain(ctx context.Context, cat catalog.Catalog, ident string, opts MaintainOptions, each func(Action, any)) (MaintainReport, error) {
	opts = opts.withDefaults()
	if opts.OrphanOlderThan < MinOrphanAge && has(opts.Actions, ActionDeleteOrphans) {
		return MaintainReport{Table: ident}, fmt.Errorf("%w: %v", ErrUnsafeOrphanAge, opts.OrphanOlderThan)
	}
	if each == nil {
		each = func(Action, any) {}
	}
	rep := MaintainReport{Table: ident}
	for _, a := range Actions {
		if !has(opts.Actions, a) {
			continue
		}
		switch a {
		case ActionCompact:
			r, err := Compact(ctx, cat, ident, opts.Compact, opts.Backoff)
			if err != nil {
				return rep, fmt.Errorf("%s %s: %w", a, ident, err)
			}
			rep.Compact = &r
			each(a, r)
		case ActionRewriteManifests:
			r, err := RewriteManifests(ctx, cat, ident, opts.Backoff)
			if err != nil {
				return rep, fmt.Errorf("%s %s: %w", a, ident, err)
			}
			rep.Manifests = &r
			each(a, r)
		case ActionExpireSnapshots:
			r, err := ExpireSnapshots(ctx, cat, ident, opts.ExpireOlderThan, opts.RetainLast, opts.Backoff)
			if err != nil {
				return rep, fmt.Errorf("%s %s: %w", a, ident, err)
			}
			rep.Expire = &r
			each(a, r)
		case ActionDeleteOrphans:
			r, err := DeleteOrphans(ctx, cat, ident, opts.OrphanOlderThan)
			if err != nil {
				return rep, fmt.Errorf("%s %s: %w", a, ident, err)
			}
			rep.Orphans = &r
			each(a, r)
		}
	}
	return rep, nil
}

func has(as []Action, a Action) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// ParseActions parses a comma-separated list of action names.
func ParseActions(s string) ([]Action, error) {
	var out []Action
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !has(Actions, Action(name)) {
			var all []string
			for _, a := range Actions {
				all = append(all, string(a))
			}
			return nil, fmt.Errorf("unknown action %q: want some of %s", name, strings.Join(all, ","))
		}
		out = append(out, Action(name))
	}
	if len(out) == 0 {
		return nil, errors.New("no action")
	}
	return out, nil
}

// checkOffsetsKept fails when the transaction's staged table would give any
// pipeline other offsets than base does.
func checkOffsetsKept(base *table.Table, tx *table.Transaction) error {
	staged, err := tx.StagedTable()
	if err != nil {
		return err
	}
	for _, p := range icebergio.Pipelines(base) {
		want, err := icebergio.CommittedOffsets(base, p)
		if err != nil {
			return err
		}
		got, err := icebergio.CommittedOffsets(staged.Table, p)
		if err != nil {
			return err
		}
		if want.String() != got.String() {
			return fmt.Errorf("%w: pipeline %s: %s would become %s", ErrOffsetsChanged, p, want, got)
		}
	}
	return nil
}

// newestOffsetsSnapshot returns the haade.* summary keys of the newest
// ancestor of the current snapshot that carries a pipeline's offsets.
func newestOffsetsSnapshot(tbl *table.Table) map[string]string {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.Summary == nil || s.Summary.Properties[icebergio.SummaryPipeline] == "" || s.Summary.Properties[icebergio.SummaryOffsets] == "" {
			continue
		}
		out := map[string]string{}
		for k, v := range s.Summary.Properties {
			if strings.HasPrefix(k, "haade.") && k != SummaryMaintenance {
				out[k] = v
			}
		}
		return out
	}
	return nil
}

// snapshotCount returns the number of snapshots the table's metadata holds.
func snapshotCount(tbl *table.Table) int { return len(tbl.Metadata().Snapshots()) }

// committedBy reports whether the current snapshot's ancestry holds a
// snapshot made by maintenance run id.
func committedBy(tbl *table.Table, id string) bool {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return false
	}
	for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.Summary != nil && s.Summary.Properties[SummaryMaintenance] == id {
			return true
		}
	}
	return false
}

// runID returns a value for SummaryMaintenance that is unique per run.
func runID(action Action) string {
	return string(action) + "/" + uuid.NewString()
}
