package main

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
)

// tables lists every namespace of the catalog and the tables in it, with
// each table's snapshot count, rows, data files, last commit and location.
func (q *query) tables(ctx context.Context) error {
	nss, err := icebergio.Namespaces(ctx, q.cat)
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
