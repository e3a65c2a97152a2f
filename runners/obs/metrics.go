package obs

import (
	"regexp"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of every HAADE pipeline. They live in the worker process
// (Prism runs it in the pipeline's process; on Flink each worker serves its
// own), so they count what this process did.
var (
	RecordsRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_kafka_records_read_total", Help: "Kafka records read, per topic and partition.",
	}, []string{"topic", "partition"})
	BytesRead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_kafka_read_bytes_total", Help: "Bytes of Kafka record keys and values read.",
	}, []string{"topic", "partition"})
	ConsumerLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_kafka_consumer_lag", Help: "End offset minus next offset to read, per partition (records).",
	}, []string{"topic", "partition"})
	RecordsParsed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "haade_records_parsed_total", Help: "Records parsed into rows.",
	})
	DeadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_dead_letters_total", Help: "Records sent to the dead-letter table, by class of reason.",
	}, []string{"reason"})
	RowsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_rows_written_total", Help: "Rows written into data files, per table (committed or not yet).",
	}, []string{"table"})
	FilesWritten = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_data_files_written_total", Help: "Parquet data files written, per table.",
	}, []string{"table"})
	FileSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_data_file_size_bytes", Help: "Size of the data files written.",
		Buckets: prometheus.ExponentialBuckets(4<<10, 4, 10), // 4 KiB .. 1 GiB
	}, []string{"table"})
	CommitDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_commit_duration_seconds", Help: "Duration of successful Iceberg commits, retries included.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"table"})
	Commits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_commits_total", Help: "Windows handled by the committer, by outcome: committed, empty, duplicate, replayed.",
	}, []string{"table", "outcome"})
	CommitConflicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_commit_conflicts_total", Help: "Commits refused because the table changed meanwhile (then reloaded and retried).",
	}, []string{"table"})
	Retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_retries_total", Help: "Retries of a failed storage or catalog operation, per table and operation.",
	}, []string{"table", "op"})
	Freshness = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_freshness_seconds", Help: "Commit time minus the Kafka timestamp of the oldest and of the newest record of each commit.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 14),
	}, []string{"table"})
	UncommittedFiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_uncommitted_files", Help: "Data files written whose window waits for commit in the committer.",
	}, []string{"table"})
	LastCommit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_last_commit_timestamp_seconds", Help: "Unix time of the last successful commit, per table.",
	}, []string{"table"})
)

var haadeCollectors = []prometheus.Collector{RecordsRead, BytesRead, ConsumerLag, RecordsParsed, DeadLetters, RowsWritten,
	FilesWritten, FileSize, CommitDuration, Commits, CommitConflicts, Retries, Freshness,
	UncommittedFiles, LastCommit, sinceCommit}

func init() { Registry.MustRegister(haadeCollectors...) }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames lists the names of HAADE's own metrics, as exposed (a
// histogram also exposes _bucket, _sum and _count series).
func MetricNames() []string {
	var out []string
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range haadeCollectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// CommitSucceeded records a successful commit of table at t.
func CommitSucceeded(table string, t time.Time) {
	LastCommit.WithLabelValues(table).Set(float64(t.UnixNano()) / 1e9)
	sinceCommit.mark(table, t)
}

// TableSeen starts the "seconds since the last successful commit" clock of a
// table, so that a pipeline that never commits is visible too.
func TableSeen(table string) { sinceCommit.seen(table, time.Now()) }

// sinceCommit exports haade_seconds_since_last_commit, computed at scrape time.
var sinceCommit = &sinceCollector{last: map[string]time.Time{},
	desc: prometheus.NewDesc("haade_seconds_since_last_commit",
		"Seconds since the last successful commit of a table (since the process started, before the first).", []string{"table"}, nil)}

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
