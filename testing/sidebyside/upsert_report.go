package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/haade/haade/testing/stats"
)

// markdownUpsert is the table of a keyed (--keys) report: per contender, the
// medians of its runs and their spread, and the ratio of each median to
// flink's.
func markdownUpsert(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d updates over %d keys (%.0f%% tombstones; %d live keys at the end), %d partitions, commit interval (Flink checkpoint interval) %s; %s; %s\n\n",
		rep.Events, rep.Keys, 100*rep.Tombstones, rep.LiveKeys, rep.Partitions, rep.CommitInterval, rep.Machine, rep.Date)
	b.WriteString("| contender | runs | table right after | × flink | CPU s | × flink | peak RSS | rows in data files | data files | equality delete files | position delete files | snapshots | full scan (iceberg-go) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	by := map[string][]Result{}
	for _, r := range rep.Results {
		by[r.Contender] = append(by[r.Contender], r)
	}
	col := func(rs []Result, f func(Result) float64) (median, lo, hi float64) {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, f(r))
		}
		return stats.Median(xs), slices.Min(xs), slices.Max(xs)
	}
	spread := func(m, lo, hi float64, unit string) string {
		if lo == hi {
			return fmt.Sprintf("%.1f%s", m, unit)
		}
		return fmt.Sprintf("%.1f%s (%.1f–%.1f)", m, unit, lo, hi)
	}
	wall := func(r Result) float64 { return r.VisibleSeconds }
	cpu := func(r Result) float64 { return r.CPUSeconds }
	var flinkWall, flinkCPU float64
	if rs := by["flink"]; len(rs) > 0 {
		flinkWall, _, _ = col(rs, wall)
		flinkCPU, _, _ = col(rs, cpu)
	}
	ratio := func(x, base float64) string {
		if base == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", x/base)
	}
	for _, name := range contenderOrder {
		rs := by[name]
		if len(rs) == 0 {
			continue
		}
		w, wlo, whi := col(rs, wall)
		c, clo, chi := col(rs, cpu)
		rss, _, _ := col(rs, func(r Result) float64 { return float64(r.PeakRSSBytes) / (1 << 20) })
		dataRows, _, _ := col(rs, func(r Result) float64 { return float64(r.DataRows) })
		data, _, _ := col(rs, func(r Result) float64 { return float64(r.DataFiles) })
		eq, _, _ := col(rs, func(r Result) float64 { return float64(r.EqDeleteFiles) })
		pos, _, _ := col(rs, func(r Result) float64 { return float64(r.PosDeleteFiles) })
		snaps, _, _ := col(rs, func(r Result) float64 { return float64(r.Snapshots) })
		scan, slo, shi := col(rs, func(r Result) float64 { return r.ScanMedianSeconds })
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %.0f MiB | %s | %.0f | %.0f | %.0f | %.0f | %s |\n",
			labels[name], len(rs), spread(w, wlo, whi, " s"), ratio(w, flinkWall), spread(c, clo, chi, ""), ratio(c, flinkCPU),
			rss, thousands(dataRows), data, eq, pos, snaps, spreadScan(scan, slo, shi))
	}
	return b.String()
}

// spreadScan prints scan seconds, which are often below one, with two
// decimals.
func spreadScan(m, lo, hi float64) string {
	if lo == hi {
		return fmt.Sprintf("%.2f s", m)
	}
	return fmt.Sprintf("%.2f s (%.2f–%.2f)", m, lo, hi)
}
