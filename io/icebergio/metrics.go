package icebergio

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The Prometheus metrics of this package.
var (
	rowsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_rows_written_total", Help: "Rows written into data files, per table (committed or not yet).",
	}, []string{"table"})
	filesWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_data_files_written_total", Help: "Parquet data files written, per table.",
	}, []string{"table"})
	fileSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_data_file_size_bytes", Help: "Size of the data files written.",
		Buckets: prometheus.ExponentialBuckets(4<<10, 4, 10), // 4 KiB .. 1 GiB
	}, []string{"table"})
	commitDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_commit_duration_seconds", Help: "Duration of successful Iceberg commits, retries included.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"table"})
	commits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_commits_total", Help: "Windows handled by the committer, by outcome: committed, empty, duplicate, replayed.",
	}, []string{"table", "outcome"})
	commitConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_commit_conflicts_total", Help: "Commits refused because the table changed meanwhile (then reloaded and retried).",
	}, []string{"table"})
	retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_retries_total", Help: "Retries of a failed storage or catalog operation, per table and operation.",
	}, []string{"table", "op"})
	freshness = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_freshness_seconds", Help: "Commit time minus the Kafka timestamp of the oldest and of the newest record of each commit.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 14),
	}, []string{"table"})
	uncommittedFiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_uncommitted_files", Help: "Data files written whose window waits for commit in the committer.",
	}, []string{"table"})
	lastCommit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_last_commit_timestamp_seconds", Help: "Unix time of the last successful commit, per table.",
	}, []string{"table"})
)

// promotionMismatches counts the promoted members whose JSON value does
// not fit their column: the member stays in the row's overflow column.
var promotionMismatches = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "haade_promotion_mismatches_total",
	Help: "Members of promoted columns whose JSON value did not fit the column's type; kept in the overflow column (extra).",
}, []string{"table", "column"})

// Collectors returns this package's Prometheus collectors. A command
// registers them with the registry it serves (runners/obs.MustRegister);
// the package never registers them itself.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{rowsWritten, filesWritten, fileSize, commitDuration, commits, commitConflicts, retries, freshness, uncommittedFiles, lastCommit, sinceCommit, promotionMismatches}
}

// commitSucceeded records a successful commit of table at t.
func commitSucceeded(table string, t time.Time) {
	lastCommit.WithLabelValues(table).Set(float64(t.UnixNano()) / 1e9)
	sinceCommit.mark(table, t)
}

// tableSeen starts the "seconds since the last successful commit" clock of a
// table, so that a pipeline that never commits is visible too.
func tableSeen(table string) { sinceCommit.seen(table, time.Now()) }

// sinceCommit exports haade_seconds_since_last_commit, computed at scrape time.
// Commits mark it, and so do windows that needed none (empty or already in the
// table): a window with no row for a table leaves that table current.
var sinceCommit = &sinceCollector{last: map[string]time.Time{},
	desc: prometheus.NewDesc("haade_seconds_since_last_commit",
		"Seconds since the table was last current with the stream: its last successful commit, or a window with nothing for it (since the process started, before either).", []string{"table"}, nil)}

type sinceCollector struct {
	mu   sync.Mutex
	last map[string]time.Time
	desc *prometheus.Desc
}

func (c *sinceCollector) mark(table string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.last[table]) {
		c.last[table] = t
	}
}

func (c *sinceCollector) seen(table string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.last[table]; !ok {
		c.last[table] = t
	}
}

func (c *sinceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sinceCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for t, at := range c.last {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, now.Sub(at).Seconds(), t)
	}
}
