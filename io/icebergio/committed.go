package icebergio

import (
	"sort"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/transforms/offsets"
)

// Pipelines lists the pipelines whose offsets the table holds: those named
// by snapshots of the current snapshot's ancestry, and those with a
// progress property.
func Pipelines(tbl *table.Table) []string {
	seen := map[string]bool{}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
			if s.Summary == nil {
				continue
			}
			if p := s.Summary.Properties[SummaryPipeline]; p != "" && s.Summary.Properties[SummaryOffsets] != "" {
				seen[p] = true
			}
		}
	}
	for k := range tbl.Properties() {
		if p, ok := strings.CutPrefix(k, ProgressProperty("")); ok && p != "" {
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// AllCommittedOffsets returns CommittedOffsets for every pipeline of the table.
func AllCommittedOffsets(tbl *table.Table) (map[string]offsets.Offsets, error) {
	out := map[string]offsets.Offsets{}
	for _, p := range Pipelines(tbl) {
		o, err := CommittedOffsets(tbl, p)
		if err != nil {
			return nil, err
		}
		out[p] = o
	}
	return out, nil
}
