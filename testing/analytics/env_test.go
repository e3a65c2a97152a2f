//go:build e2e

package analytics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	brokers    = "127.0.0.1:9092"
	s3Endpoint = "http://127.0.0.1:9000"
	catalogURI = "postgres://haade:haade@127.0.0.1:5432/lakehouse?sslmode=disable"
	warehouse  = "s3://warehouse/"
	trinoURL   = "http://127.0.0.1:8080"
	// namespace of every table this tier makes (Trino's schema).
	namespace  = "analytics"
	partitions = 4
)

var (
	repoRoot                                             string
	bronzeBin, silverBin, goldBin, queryBin, maintainBin string
	// started are the services TestMain started, stopped at the end.
	started []string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	var err error
	if repoRoot, err = cmdtest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	t0 := time.Now()
	// The pipelines run as processes of their own, through their command lines.
	bins, done := cmdtest.BuildTemp(filepath.Join(repoRoot, "pipelines/bronze"), filepath.Join(repoRoot, "pipelines/silver"),
		filepath.Join(repoRoot, "pipelines/gold"), filepath.Join(repoRoot, "pipelines/query"), filepath.Join(repoRoot, "pipelines/maintain"))
	defer done()
	bronzeBin, silverBin, goldBin, queryBin, maintainBin = bins[0], bins[1], bins[2], bins[3], bins[4]
	fmt.Fprintf(os.Stderr, "analytics: built bronze, silver, gold, query and maintain in %v\n", time.Since(t0).Round(time.Second))
	for _, s := range []string{"postgres", "minio", "kafka", "trino"} {
		_, err := cmdtest.Script(repoRoot, nil, s, "status")
		wasRunning := err == nil
		t := time.Now()
		if _, err := cmdtest.Script(repoRoot, nil, s, "start"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "analytics: %s.sh start: %v\n", s, time.Since(t).Round(100*time.Millisecond))
		if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
			started = append(started, s)
		}
	}
	code := m.Run()
	for i := len(started) - 1; i >= 0; i-- {
		if _, err := cmdtest.Script(repoRoot, nil, started[i], "stop"); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// mustScript runs testing/services/NAME.sh with args and returns its
// combined output; it fails t when the script fails.
func mustScript(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := cmdtest.Script(repoRoot, nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func catalogConfig() icebergio.CatalogConfig {
	return icebergio.CatalogConfig{Type: "sql", Name: "local", URI: catalogURI, Warehouse: warehouse, S3Endpoint: s3Endpoint}
}

// lake is one test's topic and medallion tables, all in namespace.
type lake struct {
	t                                          *testing.T
	id, topic                                  string
	bronze, dlq, silver, rejects, daily, terms string
	dir                                        string
	runs                                       int
}

// newLake makes a fresh topic and names fresh tables for a test; name ""
// gives the fixed names the dashboard reads (analytics.bronze_events, ...),
// purged first. On success the tables are purged and the topic deleted; on
// failure they are kept for inspection.
func newLake(t *testing.T, name string) *lake {
	t.Helper()
	id := randomID()
	suffix := ""
	if name != "" {
		suffix = "_" + name + "_" + id
	}
	l := &lake{t: t, id: id, topic: "analytics-" + id, dir: t.TempDir()}
	for _, p := range []struct {
		dst  *string
		base string
	}{{&l.bronze, "bronze_events"}, {&l.dlq, "bronze_events_dlq"}, {&l.silver, "silver_events"}, {&l.rejects, "silver_rejects"},
		{&l.daily, "gold_source_daily"}, {&l.terms, "gold_trending_terms"}} {
		*p.dst = namespace + "." + p.base + suffix
	}
	if name == "" {
		l.purge()
	}
	mustScript(t, "kafka", "create-topic", l.topic, strconv.Itoa(partitions))
	t.Logf("topic %s, tables %s, %s, %s, %s, %s, %s", l.topic, l.bronze, l.dlq, l.silver, l.rejects, l.daily, l.terms)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("HAADE_KEEP_TABLES") != "" {
			t.Logf("kept topic %s and the tables for inspection", l.topic)
			return
		}
		if name != "" {
			l.purge()
		}
		if _, err := cmdtest.Script(repoRoot, nil, "kafka", "topics", "--delete", "--topic", l.topic); err != nil {
			t.Logf("deleting topic %s: %v", l.topic, err)
		}
	})
	return l
}

func (l *lake) tables() []string {
	return []string{l.bronze, l.dlq, l.silver, l.rejects, l.daily, l.terms}
}

func (l *lake) purge() { purgeTables(l.t, l.tables()...) }

// purgeTables drops tables, files and all; missing ones are fine.
func purgeTables(t *testing.T, idents ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cat, err := catalogConfig().Open(ctx)
	if err != nil {
		t.Logf("purge: %v", err)
		return
	}
	defer func() {
		if c, ok := cat.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	if err := icebergtest.Purge(ctx, cat, s3Endpoint, idents...); err != nil {
		t.Logf("purge: %v", err)
	}
}

func catalogFlags() []string {
	return []string{"--catalog-uri=" + catalogURI, "--warehouse=" + warehouse, "--s3-endpoint=" + s3Endpoint}
}

// run runs one of the pipeline binaries to completion and returns its output.
func (l *lake) run(bin string, timeout time.Duration, args ...string) string {
	l.t.Helper()
	l.runs++
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	logPath := filepath.Join(l.dir, fmt.Sprintf("%02d-%s.log", l.runs, filepath.Base(bin)))
	_ = os.WriteFile(logPath, out, 0o644)
	if err != nil {
		l.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, cmdtest.Tail(string(out), 40))
	}
	l.t.Logf("%s finished in %v:\n%s", filepath.Base(bin), time.Since(start).Round(100*time.Millisecond), summaryLines(string(out)))
	return string(out)
}

func (l *lake) bronzeArgs(extra ...string) []string {
	return append(append([]string{"--runner=direct", "--brokers=" + brokers, "--topic=" + l.topic, "--table=" + l.bronze,
		"--dlq-table=" + l.dlq, "--pipeline-id=analytics-bronze-" + l.id, "--commit-interval=2s", "--metrics-addr="},
		catalogFlags()...), extra...)
}

func (l *lake) runBronze() { l.run(bronzeBin, 5*time.Minute, l.bronzeArgs("--bounded")...) }

func (l *lake) runSilver() {
	l.run(silverBin, 5*time.Minute, append([]string{"--source=" + l.bronze, "--table=" + l.silver, "--rejects-table=" + l.rejects,
		"--pipeline-id=analytics-silver-" + l.id, "--commit-interval=2s", "--bounded"}, catalogFlags()...)...)
}

func (l *lake) runGold() {
	l.run(goldBin, 5*time.Minute, append([]string{"--source=" + l.silver, "--daily-table=" + l.daily, "--terms-table=" + l.terms,
		"--pipeline-id=analytics-gold-" + l.id}, catalogFlags()...)...)
}

// queryCount is the repository's own reader: pipelines/query count.
func queryCount(t *testing.T, ident string) int64 {
	t.Helper()
	out, err := exec.Command(queryBin, append([]string{"count", ident}, catalogFlags()...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("query count %s: %v\n%s", ident, err, out)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("query count %s: %q: %v", ident, out, err)
	}
	return n
}

func summaryLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, "level=") && !strings.HasPrefix(l, "{") {
			keep = append(keep, "  "+l)
		}
	}
	return strings.Join(keep, "\n")
}

// sample is what a test produced: every record, by partition, in order.
type sample struct {
	// values[p][i] is the value of offset i of partition p (nil: a tombstone)
	values [partitions][][]byte
}

func (s *sample) total() int {
	n := 0
	for _, v := range s.values {
		n += len(v)
	}
	return n
}

// event is the JSON of a good record.
type event struct {
	Source    *string `json:"source"`
	Title     *string `json:"title,omitempty"`
	Timestamp string  `json:"timestamp"`
}

var (
	sources = []string{"Central Bank", "debt-desk", "ratings", "news-wire", "treasury"}
	words   = []string{"bond", "yield", "default", "restructuring", "coupon", "spread", "rating", "downgrade", "sovereign", "maturity", "auction", "inflation"}
)

// badValues are malformed records; each becomes a dead letter with these
// exact bytes, invalid UTF-8 included.
var badValues = [][]byte{
	[]byte("\xff\xfe not json at all \x00\x01"),
	[]byte(`{"source":"x","title":"no time"}`),
	[]byte(`{"source":"x","title":"bad time","timestamp":"yesterday"}`),
	[]byte("{\"source\":\"caf\xe9\",\"title\":\"latin-1\",\"timestamp\":\"2026-11-28T12:00:00Z\"}"),
	[]byte(`{"source":"x","title":"t","timestamp":"2026-11-28T12:00:00Z"} trailing`),
}

// produce writes n good events (timestamps spread over the three days
// before today, a few exact duplicates, a few without a title), then the
// bad values and a tombstone, round-robin over the partitions, and records
// what went where in s.
func produce(t *testing.T, topic string, n int, round int, s *sample) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var values [][]byte
	var prev []byte
	for i := 0; i < n; i++ {
		if i%50 == 49 && prev != nil {
			values = append(values, prev) // silver drops it as a duplicate
			continue
		}
		src := sources[i%len(sources)]
		title := fmt.Sprintf("%s %s %s r%d", words[i%len(words)], words[(i/3+round)%len(words)], words[(i*7)%len(words)], i%13)
		ev := event{Source: &src, Title: &title,
			Timestamp: today.Add(-time.Duration(1+i%3) * 24 * time.Hour).Add(time.Duration(i) * time.Second).Add(time.Duration(round) * time.Hour).Format(time.RFC3339Nano)}
		if i%40 == 39 {
			ev.Title = nil // silver rejects it
		}
		b, _ := json.Marshal(ev)
		values = append(values, b)
		prev = b
	}
	values = append(values, badValues...)
	values = append(values, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i, v := range values {
		p := int32((i + round) % partitions)
		recs = append(recs, &kgo.Record{Partition: p, Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
	for _, r := range recs {
		if int(r.Offset) != len(s.values[r.Partition]) {
			t.Fatalf("partition %d: offset %d, want %d (a topic of this test only)", r.Partition, r.Offset, len(s.values[r.Partition]))
		}
		s.values[r.Partition] = append(s.values[r.Partition], r.Value)
	}
	t.Logf("produced %d records (%d good, %d malformed, 1 tombstone) to %s", len(values), n, len(badValues), topic)
}
