// Package icetables describes Iceberg tables as OpenLineage datasets, for
// a command's lineage (lineage.Command's InputTables and OutputTables). It
// is a package of its own so that the harness, which carries lineage.Command,
// links no Iceberg catalog: a pipeline that names its tables links it.
package icetables

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/runners/lineage"
)

// Tables are Iceberg tables of one catalog, as lineage datasets: namespace
// the warehouse URL (s3://warehouse, file:///.../warehouse), name the table
// identifier (lakehouse.bronze_events), with the standard catalog facet
// (framework iceberg, the catalog's type and name) and schema facet.
//
// Reading the catalog is best effort: a table that cannot be loaded is
// named without facets, and lineage never fails a run.
type Tables struct {
	cat      icebergio.CatalogConfig
	pipeline string
	idents   []string
	// before is each table's current snapshot id when Outputs was called (0:
	// none), where the snapshots of this run begin.
	before map[string]int64
	// ours says whether a snapshot summary's properties are this run's.
	ours func(map[string]string) bool
}

// Of describes the tables idents ("namespace.table") of cat that
// pipeline (the snapshot summary's haade.pipeline) reads or writes.
func Of(cat icebergio.CatalogConfig, pipeline string, idents ...string) *Tables {
	return &Tables{cat: cat, pipeline: pipeline, idents: idents, before: map[string]int64{},
		ours: func(p map[string]string) bool { return p[icebergio.SummaryPipeline] == pipeline }}
}

// Maintained describes the tables idents of cat that table
// maintenance (pipelines/maintain) rewrites: Committed reports the snapshots
// that carry maintain.SummaryMaintenance (compactions, manifest rewrites).
func Maintained(cat icebergio.CatalogConfig, idents ...string) *Tables {
	t := Of(cat, "", idents...)
	t.ours = func(p map[string]string) bool { return p[maintain.SummaryMaintenance] != "" }
	return t
}

// loadTimeout bounds each catalog read: lineage must not hold a run up.
const loadTimeout = 10 * time.Second

func (t *Tables) namespace() string {
	wh, err := t.cat.WarehouseURL()
	if err != nil {
		wh = t.cat.Warehouse
	}
	return strings.TrimRight(wh, "/")
}

// load returns the tables that could be loaded, by identifier.
func (t *Tables) load(ctx context.Context) map[string]*table.Table {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	out := map[string]*table.Table{}
	cat, err := t.cat.Open(ctx)
	if err != nil {
		return out
	}
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	for _, ident := range t.idents {
		id, err := icebergio.Identifier(ident)
		if err != nil {
			continue
		}
		if tbl, err := cat.LoadTable(ctx, id); err == nil {
			out[ident] = tbl
		}
	}
	return out
}

// facets are the dataset facets of tbl (nil: no facets).
func (t *Tables) facets(tbl *table.Table) map[string]any {
	if tbl == nil {
		return nil
	}
	cfg := t.cat
	typ, name := cfg.Type, cfg.Name
	if typ == "" {
		typ = "sql"
	}
	if name == "" {
		name = "local"
	}
	return map[string]any{
		"schema":  lineage.NewSchemaFacet(schemaFields(tbl.Schema().Fields())),
		"catalog": lineage.NewCatalogFacet(typ, name, tbl.MetadataLocation(), t.namespace()),
	}
}

// Inputs returns the tables as input datasets.
func (t *Tables) Inputs(ctx context.Context) []lineage.InputDataset {
	if t == nil {
		return nil
	}
	tbls := t.load(ctx)
	out := []lineage.InputDataset{}
	for _, ident := range t.idents {
		out = append(out, lineage.InputDataset{Namespace: t.namespace(), Name: ident, Facets: t.facets(tbls[ident])})
	}
	return out
}

// Outputs returns the tables as output datasets, and records each one's
// current snapshot: Committed reports the snapshots made after it.
func (t *Tables) Outputs(ctx context.Context) []lineage.OutputDataset {
	if t == nil {
		return nil
	}
	tbls := t.load(ctx)
	out := []lineage.OutputDataset{}
	for _, ident := range t.idents {
		t.before[ident] = 0
		if tbl := tbls[ident]; tbl != nil && tbl.CurrentSnapshot() != nil {
			t.before[ident] = tbl.CurrentSnapshot().SnapshotID
		}
		out = append(out, lineage.OutputDataset{Namespace: t.namespace(), Name: ident, Facets: t.facets(tbls[ident])})
	}
	return out
}

// Committed returns the tables as output datasets with what this run
// committed to each since Outputs: the snapshots of this pipeline id (the
// custom haade_snapshots facet) and their added rows, bytes and data files
// (the standard outputStatistics facet). Snapshots another writer made
// meanwhile (a compaction) are left out.
func (t *Tables) Committed(ctx context.Context) []lineage.OutputDataset {
	if t == nil {
		return nil
	}
	tbls := t.load(ctx)
	out := []lineage.OutputDataset{}
	for _, ident := range t.idents {
		ds := lineage.OutputDataset{Namespace: t.namespace(), Name: ident, Facets: t.facets(tbls[ident])}
		if tbl := tbls[ident]; tbl != nil {
			snaps, rows, size, files := t.since(tbl, t.before[ident])
			var current int64
			if s := tbl.CurrentSnapshot(); s != nil {
				current = s.SnapshotID
			}
			ds.OutputFacets = map[string]any{
				"outputStatistics": lineage.NewOutputStatistics(rows, size, files),
				"haade_snapshots":  lineage.NewSnapshotsFacet(current, snaps),
			}
		}
		out = append(out, ds)
	}
	return out
}

// since returns the snapshots of t's pipeline after the snapshot before
// (exclusive), oldest first, and the rows, bytes and data files they added.
func (t *Tables) since(tbl *table.Table, before int64) (snaps []lineage.Snapshot, rows, size, files int64) {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil, 0, 0, 0
	}
	for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
		if s.SnapshotID == before {
			break
		}
		if s.Summary == nil || !t.ours(s.Summary.Properties) {
			continue
		}
		p := s.Summary.Properties
		n := func(k string) int64 { v, _ := strconv.ParseInt(p[k], 10, 64); return v }
		snaps = append(snaps, lineage.Snapshot{SnapshotID: s.SnapshotID, Operation: string(s.Summary.Operation),
			AddedRecords: n("added-records"), DeletedRecords: n("deleted-records"), TimestampMs: s.TimestampMs})
		rows += n("added-records")
		size += n("added-files-size")
		files += n("added-data-files")
	}
	slices.Reverse(snaps)
	return snaps, rows, size, files
}

// schemaFields is an Iceberg schema as schema facet fields, with Iceberg's
// type names (string, long, timestamptz, struct<...>); nested types list
// their members.
func schemaFields(fs []iceberg.NestedField) []lineage.SchemaField {
	out := make([]lineage.SchemaField, 0, len(fs))
	for _, f := range fs {
		sf := lineage.SchemaField{Name: f.Name, Type: f.Type.String(), Description: f.Doc}
		switch tt := f.Type.(type) {
		case *iceberg.StructType:
			sf.Type = "struct"
			sf.Fields = schemaFields(tt.FieldList)
		case *iceberg.ListType:
			sf.Type = "list"
			sf.Fields = schemaFields([]iceberg.NestedField{tt.ElementField()})
		case *iceberg.MapType:
			sf.Type = "map"
			sf.Fields = schemaFields([]iceberg.NestedField{tt.KeyField(), tt.ValueField()})
		}
		out = append(out, sf)
	}
	return out
}
