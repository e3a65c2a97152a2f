package maintain

import (
	"context"

	"github.com/haade/haade/io/icebergio"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ManifestsReport is what RewriteManifests did.
type ManifestsReport struct {
	Rewritten int    // manifests replaced
	Added     int    // manifests written in their place
	NoOp      string // why nothing changed, or ""
	Snapshot  int64  // the rewrite snapshot, 0 when nothing changed
	Attempts  int    // commits tried (more than 1 after conflicts)
}

// RewriteManifests merges the small data manifests of table ident's
// current snapshot into target-sized ones (commit.manifest.target-size-bytes),
// in a metadata-only "replace" snapshot. iceberg-go gives that snapshot no
// summary properties of ours: icebergio.CommittedOffsets finds the offsets in its
// ancestors, which ExpireSnapshots keeps. A conflict reloads and redoes it.
func RewriteManifests(ctx context.Context, cat catalog.Catalog, ident string, b icebergio.Backoff) (ManifestsReport, error) {
	var rep ManifestsReport
	err := icebergio.Retry(ctx, b, "rewrite manifests", ident, func() error {
		rep.Attempts++
		cur, err := loadExisting(ctx, cat, ident)
		if err != nil {
			return err
		}
		tx := cur.NewTransaction()
		if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
			return err
		}
		res, err := tx.RewriteManifests(ctx)
		if err != nil {
			return err
		}
		if res.IsNoOp() {
			rep = ManifestsReport{NoOp: res.NoOpReason.String(), Attempts: rep.Attempts}
			return nil
		}
		if err := checkOffsetsKept(cur, tx); err != nil {
			return icebergio.Permanent(err)
		}
		nt, err := icebergio.CommitPinned(ctx, ident, tx)
		if err != nil {
			return err
		}
		rep.Rewritten, rep.Added = len(res.RewrittenManifests), len(res.AddedManifests)
		rep.Snapshot = nt.CurrentSnapshot().SnapshotID
		return nil
	})
	return rep, err
}
