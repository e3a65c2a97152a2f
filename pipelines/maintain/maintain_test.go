package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/haade/haade/io/icebergio"
	icemaint "github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/enrich"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

const (
	topic    = "fintech.debt.raw"
	events   = "lakehouse.bronze_events"
	dlq      = "lakehouse.bronze_events_dlq"
	pipeline = "bronze"
)

// env is an in-process Kafka and a temporary lakehouse that the bronze
// stages fill, wired as pipelines/bronze's build does.
type env struct {
	t     *testing.T
	kafka *embedded.Cluster
	cat   icebergio.CatalogConfig
	kcfg  kafkaio.Config
	seed  uint64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	k, err := kafkatest.Start(topic, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	dir := t.TempDir()
	return &env{t: t, kafka: k,
		cat:  icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")},
		kcfg: kafkaio.Config{Brokers: k.Brokers(), Topic: topic}}
}

// round produces n sample events, a tenth malformed, and ingests them with
// a bounded run of the bronze stages: one or more commits per table.
func (e *env) round(n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.seed++
	if _, err := kafkatest.ProduceSample(ctx, e.kafka.Brokers(), topic, n, e.seed, 0.1, event.MalformedCorpus); err != nil {
		return err
	}
	day := []tables.PartitionField{{Column: "ingested_at", Transform: "day"}}
	evs, err := icebergio.Open(ctx, e.cat, tables.Table{Ident: events, Row: tables.BronzeEvent{}, Partition: day}, pipeline)
	if err != nil {
		return err
	}
	dead, err := icebergio.Open(ctx, e.cat, tables.Table{Ident: dlq, Row: tables.DeadLetter{}, Partition: day}, pipeline)
	if err != nil {
		return err
	}
	evs.Interval, dead.Interval = time.Second, time.Second
	kt, err := kafkaio.Open(ctx, e.kcfg, kafkaio.DefaultTimeout)
	if err != nil {
		return err
	}
	defer kt.Close()
	src, err := kt.Plan(ctx, kafkaio.PlanOpts{Committed: []offsets.Offsets{evs.Committed, dead.Committed}, Bounded: true})
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	good, bad := parse.Events(s, kafkaio.Read(s, src))
	icebergio.Write(s, evs, src.Start, enrich.IngestedAt(s, good))
	icebergio.Write(s, dead, src.Start, enrich.IngestedAt(s, bad))
	_, err = runners.Run(ctx, "direct", p)
	return err
}

func (e *env) mustRound(n int) {
	e.t.Helper()
	if err := e.round(n); err != nil {
		e.t.Fatal(err)
	}
}

// maintain runs the command with the test's catalog and extra flags.
func (e *env) maintain(extra ...string) (int, string) {
	var out, errb cmdtest.Buffer
	args := append([]string{"--catalog-uri=" + e.cat.URI, "--warehouse=" + e.cat.Warehouse}, extra...)
	code := run(context.Background(), args, func(string) string { return "" }, &out, &errb)
	return code, errb.String()
}

// aggressive makes every snapshot old and every few files worth compacting.
var aggressive = []string{"--min-input-files=2", "--expire-older-than=1ms", "--retain-last=1", "--orphan-older-than=1h"}

type state struct {
	events  []tables.BronzeEvent
	dead    []tables.DeadLetter
	offsets map[string]map[string]string // table -> pipeline -> offsets
	files   map[string]int64             // table -> data files
	snaps   map[string]int               // table -> snapshots
}

func (e *env) state() state {
	e.t.Helper()
	ctx := context.Background()
	st := state{offsets: map[string]map[string]string{}, files: map[string]int64{}, snaps: map[string]int{}}
	if err := icebergio.ScanRows(ctx, e.cat, events, &st.events); err != nil {
		e.t.Fatal(err)
	}
	if err := icebergio.ScanRows(ctx, e.cat, dlq, &st.dead); err != nil {
		e.t.Fatal(err)
	}
	cat, err := e.cat.Open(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer closeCatalog(cat)
	for _, ident := range []string{events, dlq} {
		id, _ := icebergio.Identifier(ident)
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		all, err := icebergio.AllCommittedOffsets(tbl)
		if err != nil {
			e.t.Fatal(err)
		}
		st.offsets[ident] = map[string]string{}
		for p, o := range all {
			st.offsets[ident][p] = o.String()
		}
		s, err := icebergio.Stat(ctx, cat, ident, pipeline)
		if err != nil {
			e.t.Fatal(err)
		}
		st.files[ident], st.snaps[ident] = s.DataFiles, s.Snapshots
	}
	return st
}

var rowOrder = []cmp.Option{
	cmpopts.SortSlices(func(a, b tables.BronzeEvent) bool {
		return a.KafkaPartition < b.KafkaPartition || a.KafkaPartition == b.KafkaPartition && a.KafkaOffset < b.KafkaOffset
	}),
	cmpopts.SortSlices(func(a, b tables.DeadLetter) bool {
		return a.KafkaPartition < b.KafkaPartition || a.KafkaPartition == b.KafkaPartition && a.KafkaOffset < b.KafkaOffset
	}),
	cmpopts.EquateEmpty(),
}

var actionLine = regexp.MustCompile(`msg=(compact|rewrite-manifests|expire-snapshots|delete-orphans) table=(\S+)`)

// The command compacts the small files of both tables, keeps every row and
// the offsets, expires the old snapshots and logs one line per action.
func TestMaintainCommand(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		e.mustRound(60)
	}
	before := e.state()
	if before.files[events] < 3 || before.files[dlq] < 3 {
		t.Fatalf("data files before: %v, want at least 3 per table", before.files)
	}
	code, logs := e.maintain(aggressive...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	after := e.state()
	if diff := cmp.Diff(before.events, after.events, rowOrder...); diff != "" {
		t.Errorf("bronze rows changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.dead, after.dead, rowOrder...); diff != "" {
		t.Errorf("dead letters changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.offsets, after.offsets); diff != "" {
		t.Errorf("offsets changed (-before +after):\n%s", diff)
	}
	for _, ident := range []string{events, dlq} {
		// One file per day partition (two if the runs straddled midnight UTC).
		if after.files[ident] > 2 || after.files[ident] >= before.files[ident] {
			t.Errorf("%s: %d data files after, %d before", ident, after.files[ident], before.files[ident])
		}
		// The rewrite snapshot carries the offsets; a manifest rewrite may follow it.
		if after.snaps[ident] > 2 {
			t.Errorf("%s: %d snapshots after expiry, want at most 2", ident, after.snaps[ident])
		}
	}
	got := map[string]int{}
	for _, m := range actionLine.FindAllStringSubmatch(logs, -1) {
		got[m[2]+" "+m[1]]++
	}
	want := map[string]int{}
	for _, ident := range []string{events, dlq} {
		for _, a := range icemaint.Actions {
			want[ident+" "+string(a)] = 1
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("action log lines (-want +got):\n%s\nlogs:\n%s", diff, logs)
	}

	// The pipeline resumes after maintenance, from the same offsets.
	e.mustRound(40)
	e.checkExactlyOnce()
}

// Maintenance running again and again while bronze ingests loses nothing
// and duplicates nothing: every record is in exactly one table, once, and
// both tables hold the end offsets.
func TestMaintainDuringIngest(t *testing.T) {
	e := newEnv(t)
	e.mustRound(40)
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 3; i++ {
			if err := e.round(50); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	runs := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		if code, logs := e.maintain(aggressive...); code != 0 {
			t.Fatalf("maintenance run %d: exit %d:\n%s", runs+1, code, logs)
		}
		runs++
	}
	t.Logf("%d maintenance runs during 3 bounded bronze runs", runs)
	e.checkExactlyOnce()
}

// checkExactlyOnce checks that every offset of the topic is in exactly one
// of the two tables, once, and that both tables hold the end offsets.
func (e *env) checkExactlyOnce() {
	t := e.t
	t.Helper()
	st := e.state()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kafka.Brokers()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int64]int{}
	for _, ev := range st.events {
		seen[[2]int64{int64(ev.KafkaPartition), ev.KafkaOffset}]++
	}
	for _, d := range st.dead {
		seen[[2]int64{int64(d.KafkaPartition), d.KafkaOffset}]++
	}
	var want []string
	total := 0
	ends.Each(func(o kadm.ListedOffset) {
		want = append(want, fmt.Sprintf("%s/%d=%d", topic, o.Partition, o.Offset))
		for off := int64(0); off < o.Offset; off++ {
			total++
			if n := seen[[2]int64{int64(o.Partition), off}]; n != 1 {
				t.Errorf("record %d/%d is in the tables %d times", o.Partition, off, n)
			}
		}
	})
	if len(seen) != total {
		t.Errorf("the tables hold %d records, the topic %d", len(seen), total)
	}
	sort.Strings(want)
	for _, ident := range []string{events, dlq} {
		if got := strings.TrimSpace(st.offsets[ident][pipeline]); got != strings.Join(want, " ") {
			t.Errorf("%s offsets %q, want %q", ident, got, strings.Join(want, " "))
		}
	}
}

// Bad flags are one error line naming the flag, and exit code 2.
func TestMaintainBadFlags(t *testing.T) {
	e := newEnv(t)
	e.mustRound(5) // the catalog exists
	ok := []string{"--catalog-uri=" + e.cat.URI, "--warehouse=" + e.cat.Warehouse}
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"orphan age under 1h", []string{"--orphan-older-than=30m"}, "--orphan-older-than"},
		{"retain none", []string{"--retain-last=0"}, "--retain-last"},
		{"bad size", []string{"--target-file-size=huge"}, "-target-file-size"},
		{"tiny size", []string{"--target-file-size=10KB"}, "--target-file-size"},
		{"one input file", []string{"--min-input-files=1"}, "--min-input-files"},
		{"negative expiry", []string{"--expire-older-than=-1h"}, "--expire-older-than"},
		{"bad table", []string{"--tables=nonamespace"}, "--tables"},
		{"no tables", []string{"--tables=,"}, "--tables"},
		{"unknown action", []string{"--actions=compact,vacuum"}, "--actions"},
		{"bad catalog", []string{"--catalog=hive"}, "--catalog"},
		{"bad s3 endpoint", []string{"--s3-endpoint=minio:9000"}, "--s3-endpoint"},
		{"unknown flag", []string{"--dry-run"}, "--dry-run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append(append([]string(nil), ok...), tc.args...), func(string) string { return "" }, &out, &errb)
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "maintain: ") || !strings.Contains(lines[0], tc.flag) {
				t.Fatalf("exit %d, stderr %q: want 2 and one line naming %s", code, errb.String(), tc.flag)
			}
		})
	}
	// A catalog that does not exist is not created.
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--catalog-uri=" + dir + "/none.db", "--warehouse=" + dir}, func(string) string { return "" }, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--catalog-uri") {
		t.Fatalf("missing catalog: exit %d, %q", code, errb.String())
	}
	// A table that does not exist fails that table, naming --tables.
	code, logs := e.maintain("--tables=lakehouse.absent")
	if code != 1 || !strings.Contains(logs, "--tables") {
		t.Fatalf("missing table: exit %d:\n%s", code, logs)
	}
}

// Flags come from the environment as HAADE_<FLAG>; the defaults are the
// documented ones.
func TestMaintainFlagsDefaultsAndEnv(t *testing.T) {
	e := newEnv(t)
	e.mustRound(5)
	env := map[string]string{"HAADE_CATALOG_URI": e.cat.URI, "HAADE_WAREHOUSE": e.cat.Warehouse, "HAADE_RETAIN_LAST": "3", "HAADE_TARGET_FILE_SIZE": "64MiB"}
	cfg, err := parseArgs([]string{"--retain-last=4"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Options
	if o.RetainLast != 4 || o.Compact.TargetFileSize != 64<<20 || o.ExpireOlderThan != 24*time.Hour ||
		o.OrphanOlderThan != 72*time.Hour || o.Compact.MinInputFiles != 5 || len(o.Actions) != 4 {
		t.Fatalf("options %+v", o)
	}
	if diff := cmp.Diff([]string{events, dlq}, cfg.Tables); diff != "" {
		t.Fatalf("tables: %s", diff)
	}
}
