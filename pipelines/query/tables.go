package main

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
)

// tables lists every namespace of the catalog and the tables in it, with
// each table's snapshot count, rows, data files, last commit and location.
func (q *query) tables(ctx context.Context) error {
	nss, err := q.namespaces(ctx)
	if err != nil {
		return err
	}
	rows := [][]string{{"NAMESPACE", "TABLE", "SNAPSHOTS", "ROWS", "DATA FILES", "LAST COMMIT (UTC)", "LOCATION"}}
	for _, ns := range nss {
		var names []string
		for id, err := range q.cat.ListTables(ctx, ns) {
			if err != nil {
				return err
			}
			names = append(names, id[len(id)-1])
		}
		sort.Strings(names)
		nsName := strings.Join(ns, ".")
		if len(names) == 0 {
			rows = append(rows, []string{nsName, "(no tables)", "", "", "", "", ""})
		}
		for _, name := range names {
			tbl, err := q.cat.LoadTable(ctx, append(append(table.Identifier{}, ns...), name))
			if err != nil {
				return err
			}
			rows = append(rows, append([]string{nsName, name}, tableStats(tbl)...))
		}
	}
	if len(rows) == 1 {
		rows = append(rows, []string{"(no namespaces)", "", "", "", "", "", ""})
	}
	return writeTable(q.out, rows, 0)
}

// tableStats returns a table's snapshots, rows, data files, last commit
// time and location, from its metadata and current snapshot summary.
func tableStats(tbl *table.Table) []string {
	snaps := strconv.Itoa(len(tbl.Metadata().Snapshots()))
	rows, files, last := "0", "0", "never"
	if s := tbl.CurrentSnapshot(); s != nil {
		if s.Summary != nil {
			rows = orDash(s.Summary.Properties["total-records"])
			files = orDash(s.Summary.Properties["total-data-files"])
		}
		last = time.UnixMilli(s.TimestampMs).UTC().Format(time.RFC3339)
	}
	return []string{snaps, rows, files, last, tbl.Location()}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// namespaces lists every namespace, nested ones included, in order.
func (q *query) namespaces(ctx context.Context) ([]table.Identifier, error) {
	top, err := q.cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []table.Identifier
	queue := top
	for len(queue) > 0 {
		ns := queue[0]
		queue = queue[1:]
		key := strings.Join(ns, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ns)
		// A SQL catalog lists every level at once; a REST one, one level.
		if children, err := q.cat.ListNamespaces(ctx, ns); err == nil {
			for _, c := range children {
				if len(c) > len(ns) {
					queue = append(queue, c)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out, nil
}
