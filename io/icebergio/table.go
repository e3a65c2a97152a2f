package icebergio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// DefaultProperties are the table properties of docs/DESIGN.md: format v2, zstd
// Parquet, manifest merging, old metadata files cleaned up.
var DefaultProperties = map[string]string{
	"format-version":                             "2",
	"write.parquet.compression-codec":            "zstd",
	"commit.manifest-merge.enabled":              "true",
	"write.metadata.delete-after-commit.enabled": "true",
	"write.metadata.previous-versions-max":       "50",
}

// Identifier splits "ns.table" into an iceberg identifier.
func Identifier(ident string) (table.Identifier, error) {
	parts := strings.Split(ident, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("table %q: want namespace.table", ident)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("table %q: empty name part", ident)
		}
	}
	return parts, nil
}

// rowType returns the parsed row type of the table.
func rowType(t tables.Table) (*rows.Type, error) {
	rt := reflect.TypeOf(t.Row)
	if rt != nil && rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt == nil {
		return nil, fmt.Errorf("%w: table %s has no Row", ErrRowType, t.Ident)
	}
	return rows.TypeOf(rt)
}

// EnsureTable creates the namespace and the table if they are missing, and
// checks that an existing table can take the rows. An existing table that
// lacks columns of the row type gains them first, through Evolve (Change.Add),
// when it can take the rows once it has them. A concurrent creator is not
// an error.
func EnsureTable(ctx context.Context, cat catalog.Catalog, t tables.Table) (*table.Table, error) {
	ident, err := Identifier(t.Ident)
	if err != nil {
		return nil, err
	}
	rt, err := rowType(t)
	if err != nil {
		return nil, err
	}
	ns := catalog.NamespaceFromIdent(ident)
	if ok, err := cat.CheckNamespaceExists(ctx, ns); err != nil {
		return nil, fmt.Errorf("%w: check namespace %v: %v", ErrCatalog, ns, err)
	} else if !ok {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("%w: create namespace %v: %v", ErrCatalog, ns, err)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		sc := rt.Schema()
		spec, err := partitionSpec(t, sc)
		if err != nil {
			return nil, err
		}
		props := iceberg.Properties{}
		for k, v := range DefaultProperties {
			props[k] = v
		}
		for k, v := range t.Properties {
			props[k] = v
		}
		tbl, err = cat.CreateTable(ctx, ident, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			tbl, err = cat.LoadTable(ctx, ident)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: create table %s: %v", createError(err), t.Ident, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("%w: load table %s: %v", ErrCatalog, t.Ident, err)
	}
	if missing := rt.Missing(tbl.Schema()); len(missing) > 0 {
		// A table created before the row type gained columns gains them
		// too, through schema evolution (optional, null in older files;
		// nothing is rewritten), if it can take the rows once it has them.
		sc := tbl.Schema()
		next := sc.HighestFieldID()
		grown, err := iceberg.AssignFreshSchemaIDs(iceberg.NewSchema(0, missing...), func() int { next++; return next })
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Ident, err)
		}
		if err := rt.CheckCompatible(iceberg.NewSchema(sc.ID, append(slices.Clone(sc.Fields()), grown.Fields()...)...)); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Ident, err)
		}
		rep, err := Evolve(ctx, cat, t.Ident, Change{Add: missing})
		if err != nil {
			return nil, fmt.Errorf("table %s: add the columns %s: %w", t.Ident, columnNames(missing), err)
		}
		if len(rep.Applied) > 0 {
			slog.Info("table gained the row type's new columns", "table", t.Ident, "changes", rep.Applied, "schema_id", rep.SchemaID)
		}
		if tbl, err = cat.LoadTable(ctx, ident); err != nil {
			return nil, fmt.Errorf("%w: load table %s: %v", ErrCatalog, t.Ident, err)
		}
	}
	if err := rt.CheckCompatible(tbl.Schema()); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	return tbl, nil
}

func columnNames(fs []iceberg.NestedField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// partitionSpec is the Iceberg partition spec of t.Partition over schema sc.
func partitionSpec(t tables.Table, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var opts []iceberg.PartitionOption
	for _, p := range t.Partition {
		tr, err := iceberg.ParseTransform(p.Transform)
		if _, unknown := tr.(iceberg.UnknownTransform); err == nil && unknown {
			// iceberg-go accepts unknown names, for reading others' tables.
			err = iceberg.ErrInvalidTransform
		}
		if err != nil {
			return iceberg.PartitionSpec{}, fmt.Errorf("table %s: partition transform %q: %w", t.Ident, p.Transform, err)
		}
		f, ok := sc.FindFieldByName(p.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("table %s: partition column %q is not in the schema", t.Ident, p.Column)
		}
		if !tr.CanTransform(f.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("table %s: partition transform %q cannot apply to column %q of type %v", t.Ident, p.Transform, p.Column, f.Type)
		}
		name := p.Column + "_" + strings.SplitN(p.Transform, "[", 2)[0]
		if p.Transform == "identity" {
			name = p.Column
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, name, tr, sc, nil))
	}
	return iceberg.NewPartitionSpecOpts(opts...)
}

// TableStat summarises a table from its current snapshot's summary.
type TableStat struct {
	// Rows counts the rows of the data files; Deletes the position deletes
	// that remove some of them (another engine's merge-on-read deletes; an
	// upsert table's are copy-on-write and leave none).
	Rows, Deletes, DataFiles int64
	Snapshots                int
	Location                 string
	Offsets                  offsets.Offsets
}

// Stat reads a table's row count, data file count, snapshot count,
// location, and the offsets that pipeline committed.
func Stat(ctx context.Context, cat catalog.Catalog, ident, pipeline string) (TableStat, error) {
	tbl, err := LoadTable(ctx, cat, ident)
	if err != nil {
		return TableStat{}, err
	}
	st := TableStat{Snapshots: len(tbl.Metadata().Snapshots()), Location: tbl.Location()}
	if s := tbl.CurrentSnapshot(); s != nil && s.Summary != nil {
		st.Rows, _ = strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
		st.Deletes, _ = strconv.ParseInt(s.Summary.Properties["total-position-deletes"], 10, 64)
		st.DataFiles, _ = strconv.ParseInt(s.Summary.Properties["total-data-files"], 10, 64)
	}
	st.Offsets, err = CommittedOffsets(tbl, pipeline)
	return st, err
}
