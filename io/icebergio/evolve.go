package icebergio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio/rows"
)

// ErrEvolve is returned when a schema change is refused: it would lose or
// misplace data, or Iceberg does not allow it. Nothing is changed then.
var ErrEvolve = errors.New("icebergio: schema change refused")

// ReadVectorizationProperty is the table property with which Evolve turns
// off vectorized Parquet reads in Iceberg's Java readers when it widens a
// column (see evolveOnce).
const ReadVectorizationProperty = "read.parquet.vectorization.enabled"

// Promotion adds a column filled from the event member of the same name.
type Promotion struct {
	Column string
	Type   iceberg.Type
}

// Widening changes a promoted column to a wider type, as Iceberg allows:
// int to long, float to double.
type Widening struct {
	Column string
	Type   iceberg.Type
}

// Renaming renames a promoted column; it keeps its field id, its data and
// its member.
type Renaming struct{ From, To string }

// Change is one schema change of a table, committed in one transaction:
// data files are never rewritten.
type Change struct {
	// Add adds optional columns that a pipeline's row type writes and the
	// table was created without (EnsureTable gives a table the columns a
	// newer row type has, such as bronze's kafka_key). They are not
	// promoted: no member moves into them. Field ids are the table's.
	Add     []iceberg.NestedField
	Promote []Promotion
	Widen   []Widening
	Rename  []Renaming
	// Overflow is the column the promoted members come out of. Default
	// "extra".
	Overflow string
}

// EvolveReport says what Evolve did.
type EvolveReport struct {
	// SchemaID is the table's current schema id afterwards; Before the one
	// it had.
	SchemaID, Before int
	// Applied lists each change made ("promote region string (field 10)"),
	// Unchanged each one the table already had.
	Applied, Unchanged []string
}

// PromotableTypes are the types a member can be promoted to, by the names
// Evolve's callers take.
var PromotableTypes = map[string]iceberg.Type{
	"string":      iceberg.PrimitiveTypes.String,
	"int":         iceberg.PrimitiveTypes.Int32,
	"long":        iceberg.PrimitiveTypes.Int64,
	"float":       iceberg.PrimitiveTypes.Float32,
	"double":      iceberg.PrimitiveTypes.Float64,
	"boolean":     iceberg.PrimitiveTypes.Bool,
	"timestamptz": iceberg.PrimitiveTypes.TimestampTz,
}

// ParseType returns the promotable type of a name (see PromotableTypes).
func ParseType(name string) (iceberg.Type, error) {
	if t, ok := PromotableTypes[strings.ToLower(name)]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown type %q: want string, int, long, float, double, boolean or timestamptz", name)
}

// Evolve applies ch to table ident through Iceberg schema evolution: new
// columns get new field ids and are optional, so every existing data file
// reads them as null; nothing is rewritten. The promoted columns are
// recorded in rows.PromotedProperty in the same commit. A conflict with a
// concurrent commit (a pipeline writing) reloads and redoes the change.
//
// Refused, with ErrEvolve: adding a column that exists with another type,
// promoting a column that exists (unless it is
// already promoted with that type: unchanged), a name with a dot, a table
// without the overflow column; widening or renaming a column that is not
// promoted (HAADE's pipelines find their own columns by name: a renamed or
// retyped one would stop them), a widening Iceberg does not allow, a rename
// onto an existing name.
func Evolve(ctx context.Context, cat catalog.Catalog, ident string, ch Change) (EvolveReport, error) {
	if ch.Overflow == "" {
		ch.Overflow = "extra"
	}
	var rep EvolveReport
	var last error
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return rep, ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		tbl, err := LoadTable(ctx, cat, ident)
		if err != nil {
			return rep, err
		}
		rep, err = evolveOnce(ctx, tbl, ident, ch)
		if err == nil || errors.Is(err, ErrEvolve) {
			return rep, err
		}
		last = err
		slog.Warn("schema change failed, reloading", "table", ident, "attempt", attempt+1, "err", err)
	}
	return rep, fmt.Errorf("icebergio: evolve %s: %w", ident, last)
}

func evolveOnce(ctx context.Context, tbl *table.Table, ident string, ch Change) (EvolveReport, error) {
	sc := tbl.Schema()
	rep := EvolveReport{Before: sc.ID, SchemaID: sc.ID}
	promoted, err := rows.DecodePromoted(tbl.Properties()[rows.PromotedProperty])
	if err != nil {
		return rep, err
	}
	promotedByName := map[string]int{}
	for _, f := range sc.Fields() {
		if _, ok := promoted[f.ID]; ok {
			promotedByName[f.Name] = f.ID
		}
	}
	refuse := func(format string, a ...any) (EvolveReport, error) {
		return rep, fmt.Errorf("%w: %s: %s", ErrEvolve, ident, fmt.Sprintf(format, a...))
	}
	tx := tbl.NewTransaction()
	us := tx.UpdateSchema(true, false)
	changed, widened := false, false
	names := map[string]bool{} // names taken by this change
	newPromoted := maps.Clone(promoted)

	for _, a := range ch.Add {
		if err := checkName(a.Name); err != nil {
			return refuse("add %s: %v", a.Name, err)
		}
		if f, ok := sc.FindFieldByName(a.Name); ok {
			if rows.SameType(f.Type, a.Type) && !f.Required {
				rep.Unchanged = append(rep.Unchanged, fmt.Sprintf("add %s %v (field %d)", a.Name, a.Type, f.ID))
				continue
			}
			return refuse("add %s %v: the table already has a column %s (%v)", a.Name, a.Type, a.Name, f.Type)
		}
		if names[a.Name] {
			return refuse("add %s: named twice", a.Name)
		}
		names[a.Name] = true
		us.AddColumn([]string{a.Name}, a.Type, a.Doc, false, nil)
		changed = true
	}
	for _, p := range ch.Promote {
		if err := checkName(p.Column); err != nil {
			return refuse("--promote=%s: %v", p.Column, err)
		}
		if over, ok := sc.FindFieldByName(ch.Overflow); !ok || !over.Type.Equals(iceberg.PrimitiveTypes.String) {
			return refuse("--promote=%s: the table has no string column %q to promote members out of", p.Column, ch.Overflow)
		}
		if f, ok := sc.FindFieldByName(p.Column); ok {
			if _, isProm := promoted[f.ID]; isProm && f.Type.Equals(p.Type) {
				rep.Unchanged = append(rep.Unchanged, fmt.Sprintf("promote %s %v (field %d)", p.Column, p.Type, f.ID))
				continue
			}
			if _, isProm := promoted[f.ID]; isProm {
				return refuse("--promote=%s:%v: %s is already promoted as %v (use --widen for int to long or float to double)", p.Column, p.Type, p.Column, f.Type)
			}
			return refuse("--promote=%s: the table already has a column %s (%v) that is not promoted: promote adds new columns only", p.Column, p.Column, f.Type)
		}
		if names[p.Column] {
			return refuse("--promote=%s: named twice", p.Column)
		}
		names[p.Column] = true
		us.AddColumn([]string{p.Column}, p.Type, "promoted from the event member "+p.Column, false, nil)
		changed = true
	}
	for _, w := range ch.Widen {
		f, ok := sc.FindFieldByName(w.Column)
		if !ok {
			return refuse("--widen=%s: no such column", w.Column)
		}
		if _, isProm := promotedByName[w.Column]; !isProm {
			return refuse("--widen=%s: only promoted columns can be widened: HAADE's pipelines write %s from a Go field of a fixed type", w.Column, w.Column)
		}
		if f.Type.Equals(w.Type) {
			rep.Unchanged = append(rep.Unchanged, fmt.Sprintf("widen %s %v", w.Column, w.Type))
			continue
		}
		if !Widens(f.Type, w.Type) {
			return refuse("--widen=%s:%v: Iceberg cannot widen %v to %v (it allows int to long and float to double)", w.Column, w.Type, f.Type, w.Type)
		}
		us.UpdateColumn([]string{w.Column}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: w.Type}})
		changed, widened = true, true
	}
	for _, r := range ch.Rename {
		if err := checkName(r.To); err != nil {
			return refuse("--rename=%s:%s: %v", r.From, r.To, err)
		}
		f, ok := sc.FindFieldByName(r.From)
		if !ok {
			if g, ok := sc.FindFieldByName(r.To); ok && promoted[g.ID] != "" {
				rep.Unchanged = append(rep.Unchanged, fmt.Sprintf("rename %s to %s", r.From, r.To))
				continue
			}
			return refuse("--rename=%s:%s: no such column", r.From, r.To)
		}
		if _, isProm := promotedByName[r.From]; !isProm {
			return refuse("--rename=%s:%s: only promoted columns can be renamed: HAADE's pipelines find %s by name, and bronze refuses a table without it", r.From, r.To, r.From)
		}
		if _, exists := sc.FindFieldByName(r.To); exists || names[r.To] {
			return refuse("--rename=%s:%s: the table already has a column %s", r.From, r.To, r.To)
		}
		names[r.To] = true
		us.RenameColumn([]string{r.From}, r.To)
		_ = f
		changed = true
	}
	if !changed {
		return rep, nil
	}
	if err := us.Commit(); err != nil {
		return refuse("%v", err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return rep, err
	}
	newSchema := staged.Schema()
	for _, a := range ch.Add {
		if _, had := sc.FindFieldByName(a.Name); had {
			continue
		}
		if f, ok := newSchema.FindFieldByName(a.Name); ok {
			rep.Applied = append(rep.Applied, fmt.Sprintf("add %s %v (field %d)", a.Name, f.Type, f.ID))
		}
	}
	for _, p := range ch.Promote {
		f, ok := newSchema.FindFieldByName(p.Column)
		if !ok || promoted[f.ID] != "" {
			continue
		}
		newPromoted[f.ID] = p.Column
		rep.Applied = append(rep.Applied, fmt.Sprintf("promote %s %v (field %d)", p.Column, p.Type, f.ID))
	}
	for _, w := range ch.Widen {
		if f, _ := sc.FindFieldByName(w.Column); !f.Type.Equals(w.Type) {
			rep.Applied = append(rep.Applied, fmt.Sprintf("widen %s %v to %v (field %d)", w.Column, f.Type, w.Type, f.ID))
		}
	}
	for _, r := range ch.Rename {
		if f, ok := sc.FindFieldByName(r.From); ok {
			rep.Applied = append(rep.Applied, fmt.Sprintf("rename %s to %s (field %d, member %s)", r.From, r.To, f.ID, promoted[f.ID]))
		}
	}
	props := iceberg.Properties{}
	if len(ch.Promote)+len(ch.Widen)+len(ch.Rename) > 0 {
		props[rows.PromotedProperty] = rows.EncodePromoted(newPromoted)
	}
	if widened {
		// Iceberg's vectorized Parquet reader (Spark 3.5, Iceberg 1.10)
		// fails on a column widened from int to long in files that
		// iceberg-go wrote with an INT(32) annotation (ClassCastException
		// BigIntVector to IntVector); the row reader widens them right.
		props[ReadVectorizationProperty] = "false"
	}
	if len(props) > 0 {
		if err := tx.SetProperties(props); err != nil {
			return rep, err
		}
	}
	nt, err := tx.Commit(ctx)
	if err != nil {
		return rep, err
	}
	rep.SchemaID = nt.Schema().ID
	return rep, nil
}

// Widens reports whether Iceberg allows widening from to to.
func Widens(from, to iceberg.Type) bool {
	switch from.(type) {
	case iceberg.Int32Type:
		return to.Equals(iceberg.PrimitiveTypes.Int64)
	case iceberg.Float32Type:
		return to.Equals(iceberg.PrimitiveTypes.Float64)
	}
	return false
}

func checkName(n string) error {
	switch {
	case n == "":
		return errors.New("empty column name")
	case strings.ContainsAny(n, ".\"`"):
		return fmt.Errorf("column name %q has a dot or a quote (engines read a dot as a nested field)", n)
	}
	return nil
}
