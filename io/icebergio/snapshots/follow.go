package snapshots

import (
	"context"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
)

// FollowPromotions gives table target the promoted columns of table source
// that it lacks, with the same names, types and members (widening a
// narrower one): a pipeline that copies source's rows into target (silver)
// then carries them as columns too. Nothing is changed when target has
// them all. A name that target uses for another column is refused.
func FollowPromotions(ctx context.Context, cat icebergio.CatalogConfig, source, target string) (icebergio.EvolveReport, error) {
	c, err := cat.Open(ctx)
	if err != nil {
		return icebergio.EvolveReport{}, err
	}
	defer icebergio.CloseCatalog(c)
	src, err := icebergio.LoadTable(ctx, c, source)
	if err != nil {
		return icebergio.EvolveReport{}, err
	}
	cols, err := rows.PromotedColumns(src)
	if err != nil || len(cols) == 0 {
		return icebergio.EvolveReport{}, err
	}
	dst, err := icebergio.LoadTable(ctx, c, target)
	if err != nil {
		return icebergio.EvolveReport{}, err
	}
	have, err := rows.PromotedColumns(dst)
	if err != nil {
		return icebergio.EvolveReport{}, err
	}
	var ch icebergio.Change
	for _, sc := range cols {
		found := false
		for _, h := range have {
			if h.Member == sc.Member {
				found = true
				if !h.Type.Equals(sc.Type) && icebergio.Widens(h.Type, sc.Type) {
					ch.Widen = append(ch.Widen, icebergio.Widening{Column: h.Name, Type: sc.Type})
				}
			}
		}
		if !found {
			if sc.Name != sc.Member {
				// The member is the column's name in icebergio.Promotion; a source
				// column renamed after its promotion is added under its
				// member's name, then renamed.
				ch.Promote = append(ch.Promote, icebergio.Promotion{Column: sc.Member, Type: sc.Type})
				ch.Rename = append(ch.Rename, icebergio.Renaming{From: sc.Member, To: sc.Name})
				continue
			}
			ch.Promote = append(ch.Promote, icebergio.Promotion{Column: sc.Name, Type: sc.Type})
		}
	}
	if len(ch.Promote)+len(ch.Widen) == 0 {
		return icebergio.EvolveReport{}, nil
	}
	if len(ch.Rename) > 0 {
		// Renames need the promoted columns committed first.
		rep, err := icebergio.Evolve(ctx, c, target, icebergio.Change{Promote: ch.Promote, Widen: ch.Widen})
		if err != nil {
			return rep, err
		}
		r2, err := icebergio.Evolve(ctx, c, target, icebergio.Change{Rename: ch.Rename})
		r2.Applied = append(rep.Applied, r2.Applied...)
		r2.Before = rep.Before
		return r2, err
	}
	return icebergio.Evolve(ctx, c, target, ch)
}
