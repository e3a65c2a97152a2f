package silver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
)

func init() {
	register.DoFn3x1[context.Context, snapshots.SnapshotRows, func(snapshots.SnapshotRows), error](&followFn{})
	register.Emitter1[snapshots.SnapshotRows]()
}

// FollowOptions name the tables of Follow.
type FollowOptions struct {
	Catalog icebergio.CatalogConfig
	// Source is the bronze table; Target the silver table that follows it.
	Source, Target string
}

// Follow passes PCollection<snapshots.SnapshotRows> through unchanged, and
// when a bronze snapshot shows promoted columns it has not seen, gives the
// silver table the same columns (snapshots.FollowPromotions) before the
// rows go on: silver follows a promotion while it streams. Rows that reach
// a writer before it takes up the new schema keep the member in extra,
// so nothing is lost either way.
func Follow(s beam.Scope, snapshots beam.PCollection, opts FollowOptions) beam.PCollection {
	s = s.Scope("silver.Follow")
	return beam.ParDo(s, &followFn{Catalog: opts.Catalog, Source: opts.Source, Target: opts.Target}, snapshots)
}

type followFn struct {
	Catalog        icebergio.CatalogConfig
	Source, Target string

	seen string // the Members last followed
}

func (f *followFn) ProcessElement(ctx context.Context, sr snapshots.SnapshotRows, emit func(snapshots.SnapshotRows)) error {
	if sr.Members != "" && sr.Members != f.seen {
		rep, err := snapshots.FollowPromotions(ctx, f.Catalog, f.Source, f.Target)
		if err != nil {
			return fmt.Errorf("silver: follow the promoted columns of %s: %w", f.Source, err)
		}
		for _, a := range rep.Applied {
			slog.Info("silver follows bronze", "table", f.Target, "change", a)
		}
		f.seen = sr.Members
	}
	emit(sr)
	return nil
}
