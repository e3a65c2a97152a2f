package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// env is one in-process Kafka and one temporary lakehouse.
type env struct {
	t        *testing.T
	kafka    *embedded.Cluster
	cfg      bronze.Config
	produced map[int64]map[int64][]byte // partition -> offset -> value (nil: tombstone)
}

func newEnv(t *testing.T, partitions int) *env {
	t.Helper()
	cfg, err := parseArgs(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	k, err := kafkatest.Start(cfg.Kafka.Topic, partitions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	dir := t.TempDir()
	cfg.Kafka.Brokers = k.Brokers()
	cfg.Catalog.URI = filepath.Join(dir, "catalog.db")
	cfg.Catalog.Warehouse = filepath.Join(dir, "warehouse")
	cfg.Bounded = true
	cfg.CommitInterval = time.Second
	cfg.MetricsAddr = ""
	return &env{t: t, kafka: k, cfg: cfg, produced: map[int64]map[int64][]byte{}}
}

// produce sends values and records where each landed.
func (e *env) produce(values [][]byte) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cfg.Kafka.Brokers...), kgo.DefaultProduceTopic(e.cfg.Kafka.Topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range values {
		r, err := cl.ProduceSync(context.Background(), &kgo.Record{Value: v}).First()
		if err != nil {
			e.t.Fatal(err)
		}
		if e.produced[int64(r.Partition)] == nil {
			e.produced[int64(r.Partition)] = map[int64][]byte{}
		}
		e.produced[int64(r.Partition)][r.Offset] = v
	}
}

// runBronze builds and runs the pipeline as main does.
func (e *env) runBronze() error {
	e.t.Helper()
	_, err := e.runBronzePlan()
	return err
}

// runBronzePlan is runBronze, returning the plan; a bounded run then
// checks, as main does, that the tables hold every offset it read.
func (e *env) runBronzePlan() (*bronze.Plan, error) {
	e.t.Helper()
	p, s := beam.NewPipelineWithRoot()
	pl, err := bronze.Build(context.Background(), s, e.cfg)
	if err != nil {
		return nil, err
	}
	if _, err := runners.Run(context.Background(), e.cfg.Runner, p); err != nil {
		return pl, err
	}
	if e.cfg.Bounded {
		stats, err := bronze.TableStats(context.Background(), e.cfg)
		if err != nil {
			return pl, err
		}
		return pl, bronze.CheckComplete(e.cfg, pl, stats)
	}
	return pl, nil
}

// restartAfterCrash runs bronze again after a run that an injected crash
// failed. A crashed process commits nothing more, but a failed in-process
// job may: another table's committer of the same job can still be in its
// commit when Run returns, after this run's writers read that table's
// offsets. The committer then refuses the window that overlaps what the
// table holds (ErrOffsetsOverlap), nothing is written twice, and a runner's
// restart of the failed job (Flink's) writes the window again: so does this,
// once.
func (e *env) restartAfterCrash() (*bronze.Plan, error) {
	e.t.Helper()
	pl, err := e.runBronzePlan()
	if err != nil && strings.Contains(err.Error(), icebergio.ErrOffsetsOverlap.Error()) {
		e.t.Logf("the restart met a commit of the failed run, and the committer refused the overlap; running again: %v", err)
		pl, err = e.runBronzePlan()
	}
	return pl, err
}

func (e *env) tables() ([]tables.BronzeEvent, []tables.DeadLetter) {
	e.t.Helper()
	var evs []tables.BronzeEvent
	var dls []tables.DeadLetter
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.Table, &evs); err != nil {
		e.t.Fatal(err)
	}
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.DLQTable, &dls); err != nil {
		e.t.Fatal(err)
	}
	// Rows that another engine wrote (see defects_test.go) are not ours.
	evs = slices.DeleteFunc(evs, func(ev tables.BronzeEvent) bool { return ev.KafkaTopic == foreignTopic })
	dls = slices.DeleteFunc(dls, func(dl tables.DeadLetter) bool { return dl.KafkaTopic == foreignTopic })
	return evs, dls
}

// expectedEvent decodes a valid sample independently of the parser, with
// encoding/json and time.Parse.
func expectedEvent(t *testing.T, v []byte) tables.BronzeEvent {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatalf("sample %s: %v", v, err)
	}
	var ev tables.BronzeEvent
	if s, ok := m["source"].(string); ok {
		ev.Source = &s
	}
	if s, ok := m["title"].(string); ok {
		ev.Title = &s
	}
	ts, err := time.Parse(time.RFC3339Nano, m["timestamp"].(string))
	if err != nil {
		t.Fatal(err)
	}
	ev.Timestamp = ts.UnixMicro()
	// The test kit's producer sets no key and no headers, on a CreateTime topic.
	createTime := "CreateTime"
	ev.KafkaTimestampType = &createTime
	delete(m, "source")
	delete(m, "title")
	delete(m, "timestamp")
	if len(m) > 0 {
		b, _ := json.Marshal(m)
		s := string(b)
		ev.Extra = &s
	}
	return ev
}

// checkExactlyOnce asserts that every produced record is in exactly one
// table, once, on the right side, with the right content.
func (e *env) checkExactlyOnce(bad map[string]bool) {
	t := e.t
	t.Helper()
	evs, dls := e.tables()
	seen := map[[2]int64]int{}
	for _, ev := range evs {
		k := [2]int64{int64(ev.KafkaPartition), ev.KafkaOffset}
		seen[k]++
		v, ok := e.produced[k[0]][k[1]]
		if !ok {
			t.Fatalf("bronze row at %v was never produced", k)
		}
		if bad[string(v)] || v == nil {
			t.Errorf("malformed record %q at %v landed in bronze", v, k)
			continue
		}
		want := expectedEvent(t, v)
		got := ev
		// Kafka coordinates and ingestion time are checked apart.
		if got.KafkaTopic != e.cfg.Kafka.Topic || got.KafkaTimestamp == nil || got.IngestedAt <= 0 {
			t.Errorf("row %v: bad coordinates or ingested_at: %+v", k, got)
		}
		got.KafkaTopic, got.KafkaPartition, got.KafkaOffset, got.KafkaTimestamp, got.IngestedAt = "", 0, 0, nil, 0
		var gotExtra, wantExtra map[string]any
		if got.Extra != nil {
			_ = json.Unmarshal([]byte(*got.Extra), &gotExtra)
		}
		if want.Extra != nil {
			_ = json.Unmarshal([]byte(*want.Extra), &wantExtra)
		}
		if diff := cmp.Diff(wantExtra, gotExtra); diff != "" {
			t.Errorf("row %v extra (-want +got):\n%s", k, diff)
		}
		got.Extra, want.Extra = nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("row %v (-want +got):\n%s", k, diff)
		}
	}
	for _, dl := range dls {
		k := [2]int64{int64(dl.KafkaPartition), dl.KafkaOffset}
		seen[k]++
		v, ok := e.produced[k[0]][k[1]]
		if !ok {
			t.Fatalf("dead letter at %v was never produced", k)
		}
		if v == nil {
			if dl.Payload != nil {
				t.Errorf("tombstone at %v: payload %q, want null", k, dl.Payload)
			}
		} else if !bad[string(v)] {
			t.Errorf("valid record %s at %v landed in the dead letters: %s", v, k, dl.Error)
		} else if diff := cmp.Diff(v, dl.Payload); diff != "" {
			t.Errorf("dead letter %v payload (-want +got):\n%s", k, diff)
		}
		if dl.Error == "" {
			t.Errorf("dead letter %v has no reason", k)
		}
	}
	var missing, dup []string
	for p, offs := range e.produced {
		for o := range offs {
			switch seen[[2]int64{p, o}] {
			case 0:
				missing = append(missing, fmt.Sprintf("%d/%d", p, o))
			case 1:
			default:
				dup = append(dup, fmt.Sprintf("%d/%d", p, o))
			}
		}
	}
	sort.Strings(missing)
	sort.Strings(dup)
	if len(missing) > 0 || len(dup) > 0 {
		t.Fatalf("%d records lost (first %v), %d duplicated (first %v)", len(missing), head(missing), len(dup), head(dup))
	}
	if len(evs)+len(dls) != e.count() {
		t.Fatalf("bronze %d + dead letters %d != produced %d", len(evs), len(dls), e.count())
	}
}

func (e *env) count() int {
	n := 0
	for _, offs := range e.produced {
		n += len(offs)
	}
	return n
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}

func badSet() map[string]bool {
	m := map[string]bool{}
	for _, b := range event.MalformedCorpus {
		m[string(b)] = true
	}
	m[""] = true // an empty value is not one JSON object
	return m
}

func sample(n int, seed uint64) [][]byte {
	vals := kafkatest.Sample(n, seed, 0, nil)
	vals = append(vals, event.MalformedCorpus...)
	vals = append(vals, nil, []byte{}) // a tombstone and an empty value
	return vals
}

func TestBronzeEndToEnd(t *testing.T) {
	e := newEnv(t, 4)
	e.produce(sample(3000, 1))
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(badSet())
}

// TestBoundedRunIsComplete: after a bounded run, both tables hold every
// offset it read, the dead letters' table included (its windows have no
// rows most of the time), and a table short of one is reported.
func TestBoundedRunIsComplete(t *testing.T) {
	e := newEnv(t, 3)
	// Valid events only: no dead letter at all. The second run's windows
	// of the dead letters are empty, less than a minute after the first
	// run recorded the offsets.
	e.produce(kafkatest.Sample(600, 6, 0, nil))
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	e.produce(kafkatest.Sample(300, 7, 0, nil))
	pl, err := e.runBronzePlan()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ident := range []string{e.cfg.Table, e.cfg.DLQTable} {
		st, err := icebergio.Stat(context.Background(), cat, ident, e.cfg.Pipeline)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pl.End, st.Offsets); diff != "" {
			t.Errorf("%s holds offsets (-read +held):\n%s", ident, diff)
		}
	}
	// One partition's end one past what was read: the check must say so.
	pl.End.Set(e.cfg.Kafka.Topic, 1, pl.End[e.cfg.Kafka.Topic][1]+1)
	stats, err := bronze.TableStats(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = bronze.CheckComplete(e.cfg, pl, stats)
	if !errors.Is(err, bronze.ErrIncomplete) || !strings.Contains(err.Error(), e.cfg.Table) {
		t.Fatalf("checkComplete with an end not read = %v, want %v naming %s", err, bronze.ErrIncomplete, e.cfg.Table)
	}
}

func TestRerunReadsOnlyNewRecords(t *testing.T) {
	e := newEnv(t, 3)
	e.produce(sample(1000, 2))
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(badSet())
	// Nothing new: a second run commits nothing and duplicates nothing.
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(badSet())
	e.produce(sample(1500, 3))
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(badSet())
}

// A crash between writing the data files and committing them loses
// nothing and duplicates nothing once the pipeline runs again.
func TestCrashBeforeCommitThenRestart(t *testing.T) {
	for _, tbl := range []string{"lakehouse.bronze_events", "lakehouse.bronze_events_dlq"} {
		t.Run(tbl, func(t *testing.T) {
			e := newEnv(t, 4)
			e.produce(sample(2000, 4))
			crash := errors.New("injected crash before commit")
			remove := inject.At(inject.BeforeCommit(tbl), func(icebergio.FileSet) error { return crash })
			err := e.runBronze()
			remove()
			if err == nil {
				t.Fatal("the run with a crash before the commit succeeded")
			}
			e.produce(sample(500, 5))
			if _, err := e.restartAfterCrash(); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(badSet())
		})
	}
}

func TestParseArgs(t *testing.T) {
	noenv := func(string) string { return "" }
	t.Run("defaults", func(t *testing.T) {
		c, err := parseArgs(nil, noenv)
		if err != nil {
			t.Fatal(err)
		}
		want := bronze.Config{Common: runners.Common{Runner: "direct", MetricsAddr: "127.0.0.1:9102", Pipeline: "bronze", LogFormat: "text"},
			Kafka:   kafkaio.Config{Topic: "fintech.debt.raw"},
			Catalog: icebergio.CatalogConfig{Type: "sql", Name: "local", URI: "lakehouse/catalog.db", Warehouse: "lakehouse/warehouse"},
			Table:   "lakehouse.bronze_events", DLQTable: "lakehouse.bronze_events_dlq", CommitInterval: 10 * time.Second,
			Start: "earliest", Readers: 8, Demo: true, DemoEvents: 5000, OnRecreated: "fail", AllowSecondPipeline: false}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("environment", func(t *testing.T) {
		env := map[string]string{"HAADE_BROKERS": "k1:9092,k2:9092", "HAADE_COMMIT_INTERVAL": "30s", "HAADE_S3_ENDPOINT": "http://minio:9000",
			"HAADE_WAREHOUSE": "s3://warehouse/", "HAADE_BOUNDED": "true", "HAADE_TABLE": "other.t"}
		c, err := parseArgs([]string{"--table=lakehouse.x"}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"k1:9092", "k2:9092"}, c.Kafka.Brokers); diff != "" {
			t.Error(diff)
		}
		if c.CommitInterval != 30*time.Second || !c.Bounded || c.Catalog.Warehouse != "s3://warehouse/" || c.Catalog.S3Endpoint != "http://minio:9000" {
			t.Errorf("environment not applied: %+v", c)
		}
		if c.Table != "lakehouse.x" {
			t.Errorf("a flag must win over the environment: table %q", c.Table)
		}
	})
	bad := []struct {
		args []string
		flag string
	}{
		{[]string{"--runner=spark"}, "--runner"},
		{[]string{"--runner=flink"}, "--endpoint"},
		{[]string{"--commit-interval=7s"}, "--commit-interval"},
		{[]string{"--commit-interval=soon"}, "commit-interval"},
		{[]string{"--commit-interval=ten"}, "--commit-interval=ten: want a duration such as 10s"},
		{[]string{"--start=middle"}, "--start"},
		{[]string{"--kafka-readers=0"}, "--kafka-readers"},
		{[]string{"--catalog=hive"}, "--catalog"},
		{[]string{"--catalog-uri=mysql://x"}, "--catalog-uri"},
		{[]string{"--catalog=rest", "--catalog-uri=ftp://x"}, "--catalog-uri"},
		{[]string{"--warehouse=ftp://bucket/"}, "--warehouse"},
		{[]string{"--s3-endpoint=minio:9000"}, "--s3-endpoint"},
		{[]string{"--table=nodots"}, "--table"},
		{[]string{"--dlq-table=lakehouse.bronze_events"}, "--dlq-table"},
		{[]string{"--brokers=not a broker"}, "--brokers"},
		{[]string{"--brokers=k:9092", "--kafka-sasl-mechanism=GSSAPI", "--kafka-sasl-user=u"}, "--kafka"},
		{[]string{"--log-format=xml"}, "--log-format"},
		{[]string{"--no-such-flag"}, "--no-such-flag"},
		{[]string{"stray"}, "stray"},
	}
	for _, tc := range bad {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			_, err := parseArgs(tc.args, noenv)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !contains(msg, tc.flag) || contains(msg, "\n") {
				t.Errorf("error %q must be one line naming %s", msg, tc.flag)
			}
		})
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// run's exit codes and messages for bad configuration: one line naming the
// flag, a non-zero exit, within 30 s.
func TestRunBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		flag string
	}{
		{"unknown runner", []string{"--runner=nope"}, "--runner"},
		{"bad on-topic-recreated", []string{"--on-topic-recreated=maybe"}, "--on-topic-recreated"},
		{"empty topic with brokers", []string{"--brokers=127.0.0.1:1", "--topic="}, "--topic"},
		{"empty topic among several", []string{"--brokers=127.0.0.1:1", "--topic=a,,b"}, "--topic"},
		{"a topic twice", []string{"--brokers=127.0.0.1:1", "--topic=a,b,a"}, "--topic"},
		{"several topics in the demo", []string{"--demo", "--topic=a,b"}, "--topic"},
		{"several topics with a schema registry", []string{"--brokers=127.0.0.1:1", "--topic=a,b", "--schema-registry=http://127.0.0.1:1"}, "--schema-registry"},
		{"malformed route", []string{"--brokers=127.0.0.1:1", "--route=type=x"}, "--route"},
		{"route template without values", []string{"--brokers=127.0.0.1:1", "--route=*:lakehouse.t_{type}"}, "--route"},
		{"route to a bad table name", []string{"--brokers=127.0.0.1:1", "--route=type=x:nonamespace"}, "--route"},
		{"upsert of two topics into one table", []string{"--brokers=127.0.0.1:1", "--upsert", "--topic=a,b"}, "--upsert"},
		{"upsert with routes that mix two topics", []string{"--brokers=127.0.0.1:1", "--upsert", "--topic=a,b", "--route=kafka_topic=a&type=x:lakehouse.x,*:lakehouse.y"}, "--upsert"},
		{"route to the dead letters", []string{"--brokers=127.0.0.1:1", "--route=type=x:lakehouse.bronze_events_dlq"}, "--route"},
		{"bad commit interval", []string{"--commit-interval=abc"}, "--commit-interval=abc"},
		{"malformed PostgreSQL URL", []string{"--brokers=127.0.0.1:1", "--metrics-addr=", "--catalog-uri=postgres://haade:s3cret@127.0.0.1:5432:x/lakehouse"}, "--catalog-uri"},
		{"unreachable broker", []string{"--brokers=127.0.0.1:1", "--metrics-addr=", "--catalog-uri=" + dir + "/c.db", "--warehouse=" + dir + "/w"}, "--brokers"},
		{"missing bucket", []string{"--brokers=127.0.0.1:1", "--metrics-addr=", "--warehouse=s3://no-such-bucket/", "--s3-endpoint=http://127.0.0.1:1"}, "--warehouse"},
		{"unreachable REST catalog", []string{"--brokers=127.0.0.1:1", "--metrics-addr=", "--catalog=rest", "--catalog-uri=http://127.0.0.1:1", "--warehouse=" + dir + "/w"}, "--catalog-uri"},
		{"unreachable PostgreSQL catalog", []string{"--brokers=127.0.0.1:1", "--metrics-addr=", "--catalog-uri=postgres://haade:s3cret@127.0.0.1:1/lakehouse", "--warehouse=" + dir + "/w"}, "--catalog-uri"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb cmdtest.Buffer
			start := time.Now()
			code := run(tc.args, func(string) string { return "" }, &out, &errb)
			if code == 0 {
				t.Fatalf("exit 0; stderr %q", errb.String())
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %v, want < 30s", took)
			}
			lines := nonEmptyLines(errb.String())
			if len(lines) != 1 || !contains(lines[0], tc.flag) || contains(lines[0], "goroutine") {
				t.Errorf("stderr %q: want one line naming %s", errb.String(), tc.flag)
			}
			if contains(errb.String(), "s3cret") {
				t.Errorf("stderr %q shows the catalog's password", errb.String())
			}
		})
	}
}
