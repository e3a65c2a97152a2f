package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseArgsKeys(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keys=-1"}, "--keys=-1"},
		{[]string{"--events=10", "--keys=11", "--contenders=flink"}, "--keys=11: want 0 (append) up to --events=10"},
		{[]string{"--events=10000", "--keys=7919", "--contenders=flink"}, "not a multiple of 7919"},
		{[]string{"--keys=10", "--tombstones=1", "--contenders=flink"}, "--tombstones=1"},
		{[]string{"--keys=10", "--tombstones=-0.1", "--contenders=flink"}, "--tombstones=-0.1"},
		{[]string{"--keys=10"}, "spark does not upsert"}, // the default contenders: bronze,spark,connect
		{[]string{"--keys=10", "--contenders=native,connect"}, "connect does not upsert"},
		{[]string{"--keys=10", "--contenders=native", "--freshness"}, "not with --freshness"},
		{[]string{"--flink-parallelism=-1", "--contenders=flink"}, "--flink-parallelism=-1"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseArgs(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseArgs(%q) = %v, want an error naming %q", tc.args, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name       string
		args       []string
		want       Config
		out, chart string
	}{
		{"append keeps its defaults", []string{"--contenders=flink,native"}, Config{Keys: 0, Tombstones: 0.1},
			"docs/benchmarks/results/results.json", "docs/benchmarks/sidebyside.png"},
		{"keyed writes its own results and no chart", []string{"--keys=10000", "--events=100000", "--contenders=flink,native"},
			Config{Keys: 10_000, Tombstones: 0.1}, "docs/benchmarks/results/upserts.json", ""},
		{"keyed keeps an --out given", []string{"--keys=10", "--tombstones=0.25", "--contenders=native", "--out=x.json", "--chart=y.png"},
			Config{Keys: 10, Tombstones: 0.25}, "x.json", "y.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseArgs(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if c.Keys != tc.want.Keys || c.Tombstones != tc.want.Tombstones || c.Out != tc.out || c.Chart != tc.chart {
				t.Errorf("keys %d, tombstones %g, out %q, chart %q; want %d, %g, %q, %q",
					c.Keys, c.Tombstones, c.Out, c.Chart, tc.want.Keys, tc.want.Tombstones, tc.out, tc.chart)
			}
		})
	}
	for _, name := range []string{"bronze", "flink", "native"} {
		if contenderByName[name].caughtUp == nil {
			t.Errorf("contender %s upserts but cannot say when it has read the topic", name)
		}
	}
}

// TestNativeUpsertSQL checks the native contender's upsert script: the
// upsert-kafka source (raw key, JSON value without the key, the key as its
// primary key, a tombstone a DELETE), a format-v2 table in upsert mode
// keyed by kafka_key, unpartitioned, made by the script, a streaming job,
// and the consumer group the harness watches.
func TestNativeUpsertSQL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "minioadmin")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "miniosecret")
	e := &env{cfg: Config{CommitInterval: 2 * time.Second, Partitions: 8, Keys: 10_000, Tombstones: 0.1}, topic: "sidebyside-abc123"}
	r := trial{env: e, name: "sidebyside-native_abc123_1", table: "sidebyside.native_abc123_1", dir: t.TempDir()}
	sql, err := nativeSQL(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"SET 'pipeline.name' = 'sidebysidenativeabc1231';",
		"SET 'execution.runtime-mode' = 'streaming';",
		"SET 'execution.checkpointing.interval' = '2000ms';",
		"'s3.secret-access-key' = 'miniosecret'",
		"CREATE DATABASE IF NOT EXISTS `local`.`sidebyside`;",
		"CREATE TABLE `local`.`sidebyside`.`native_abc123_1` (\n  kafka_key STRING NOT NULL,",
		"'format-version' = '2',\n  'write.upsert.enabled' = 'true'\n);",
		"'connector' = 'upsert-kafka'",
		"'key.format' = 'raw'", "'value.format' = 'json'", "'value.fields-include' = 'EXCEPT_KEY'",
		"'value.json.timestamp-format.standard' = 'ISO-8601'",
		"'topic' = 'sidebyside-abc123'", "'properties.group.id' = 'sidebysidenativeabc1231'",
		"kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL",
		"INSERT INTO `local`.`sidebyside`.`native_abc123_1`\nSELECT kafka_key,",
		"FROM kafka_upserts;",
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("the script lacks %q:\n%s", want, sql)
		}
	}
	// The primary key twice: the source's (upsert-kafka's key) and the table's (Iceberg's identifier field).
	if n := strings.Count(sql, "PRIMARY KEY (kafka_key) NOT ENFORCED"); n != 2 {
		t.Errorf("%d PRIMARY KEY (kafka_key) NOT ENFORCED, want 2 (source and table):\n%s", n, sql)
	}
	for _, not := range []string{
		"PARTITIONED BY",                        // upsert mode wants the partition's source columns among the equality fields
		"scan.bounded.mode",                     // Iceberg 1.10.0's bounded FlinkSink loses files (native.go)
		"scan.startup.mode",                     // upsert-kafka always reads from the earliest offset, and refuses the option
		"'connector' = 'kafka'", "kafka_events", // the append script's source
	} {
		if strings.Contains(sql, not) {
			t.Errorf("the upsert script has %q:\n%s", not, sql)
		}
	}
	// The SELECT fills each column of the table, in order.
	create := sql[strings.Index(sql, "CREATE TABLE `local`"):]
	create = create[:strings.Index(create, "PRIMARY KEY")]
	_, sel, _ := strings.Cut(sql, "\nSELECT ")
	sel, _, _ = strings.Cut(sel, "\nFROM")
	if cols, vals := strings.Count(create, ",\n"), strings.Count(sel, ",")+1; cols != vals {
		t.Errorf("the table has %d columns, the SELECT %d values:\n%s", cols, vals, sql)
	}
	// The append script stays the append script.
	e.cfg.Keys = 0
	if sql, err := nativeSQL(r); err != nil || strings.Contains(sql, "upsert") {
		t.Errorf("without --keys the script is %v:\n%s", err, sql)
	}
}

// The flink contender upserts with --keys, and only then; its parallelism
// is runners/flink.go's unless --flink-parallelism says.
func TestFlinkCommandUpsert(t *testing.T) {
	e := &env{cfg: Config{CommitInterval: 2 * time.Second}, topic: "sidebyside-abc123",
		flink: &flinkStack{endpoint: "127.0.0.1:8099", rest: "http://127.0.0.1:8081", bin: "/tmp/x/bronze"}}
	r := trial{env: e, name: "sidebyside-flink_abc123_1", table: "sidebyside.flink_abc123_1", dir: t.TempDir()}
	for _, keys := range []int{0, 100} {
		e.cfg.Keys = keys
		cmd, err := flinkCommand(r)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(cmd.Args, " ")
		if got := strings.Contains(args, " --upsert"); got != (keys > 0) {
			t.Errorf("--keys=%d: --upsert in the command %v:\n%s", keys, got, args)
		}
		if !strings.Contains(args, "--runner=flink --bounded ") {
			t.Errorf("--keys=%d: not bounded on Flink:\n%s", keys, args)
		}
		if strings.Contains(args, "--parallelism") {
			t.Errorf("--parallelism unasked:\n%s", args)
		}
	}
	e.cfg.FlinkParallelism = 2
	cmd, _ := flinkCommand(r)
	if args := strings.Join(cmd.Args, " "); !strings.Contains(args, " --parallelism=2") {
		t.Errorf("--flink-parallelism=2: the command lacks --parallelism=2:\n%s", args)
	}
}

// bronze on Prism upserts with --keys, and only then.
func TestBronzeCommandUpsert(t *testing.T) {
	e := &env{cfg: Config{CommitInterval: 2 * time.Second}, topic: "sidebyside-abc123", bronze: "/tmp/x/bronze"}
	r := trial{env: e, name: "sidebyside-bronze_abc123_1", table: "sidebyside.bronze_abc123_1", dlq: "sidebyside.bronze_abc123_1_dlq"}
	for _, keys := range []int{0, 100} {
		e.cfg.Keys = keys
		cmd, err := contenderByName["bronze"].command(r)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(cmd.Args, " ")
		if got := strings.Contains(args, " --upsert"); got != (keys > 0) || !strings.HasPrefix(args, "/tmp/x/bronze --runner=direct ") {
			t.Errorf("--keys=%d: --upsert in the command %v:\n%s", keys, got, args)
		}
	}
}

// TestProduceKeyed produces the keyed workload into an in-process Kafka and
// reads it back as the harness does: each key in one partition, every key
// written, about the share of tombstones asked, and the expected table the
// latest record of each key whose latest is not a tombstone.
func TestProduceKeyed(t *testing.T) {
	const topic, events, keys = "keyed", 5000, 500
	c, err := kafkatest.Start(topic, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{Events: events, Keys: keys, Tombstones: 0.2, Seed: 7, Timestamps: "utc"}
	if err := produceKeyed(ctx, c.Brokers(), topic, cfg); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers()...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l := newLatest()
	var recs []*kgo.Record
	for len(recs) < events {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r); l.add(r) })
	}
	live, err := l.live()
	if err != nil {
		t.Fatal(err)
	}
	// The expected table, the slow way: per partition, in offset order, the last record of each key.
	want := map[string]keyAt{}
	tombstones := 0
	for p := range int32(4) {
		for _, r := range recs {
			if r.Partition != p {
				continue
			}
			if r.Value == nil {
				tombstones++
				delete(want, string(r.Key))
			} else {
				want[string(r.Key)] = keyAt{r.Partition, r.Offset}
			}
		}
	}
	if diff := cmp.Diff(want, live); diff != "" {
		t.Errorf("live keys (-want +got):\n%s", diff)
	}
	if len(l.at) != keys {
		t.Errorf("%d keys written, want %d", len(l.at), keys)
	}
	if share := float64(tombstones) / events; share < 0.15 || share > 0.25 {
		t.Errorf("%d tombstones of %d events (%.2f), want about 0.2", tombstones, events, share)
	}
	if len(live) == 0 || len(live) == keys {
		t.Errorf("%d live keys of %d: want some deleted and some live", len(live), keys)
	}
}

// latest takes each key's highest offset whatever the order partitions come
// in, and refuses a keyless record or a key in two partitions.
func TestLatest(t *testing.T) {
	rec := func(key string, p int32, off int64, tomb bool) *kgo.Record {
		r := &kgo.Record{Key: []byte(key), Partition: p, Offset: off, Value: []byte("{}")}
		if tomb {
			r.Value = nil
		}
		return r
	}
	l := newLatest()
	for _, r := range []*kgo.Record{
		rec("a", 0, 0, false), rec("b", 1, 0, false), rec("a", 0, 5, true), rec("c", 1, 3, true),
		rec("a", 0, 7, false), rec("b", 1, 9, false), rec("c", 1, 10, false), rec("d", 0, 11, true),
	} {
		l.add(r)
	}
	live, err := l.live()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]keyAt{"a": {0, 7}, "b": {1, 9}, "c": {1, 10}}
	if diff := cmp.Diff(want, live); diff != "" {
		t.Errorf("live (-want +got):\n%s", diff)
	}
	l.add(rec("a", 1, 12, false))
	if _, err := l.live(); err == nil || !strings.Contains(err.Error(), `two partitions ["a"]`) {
		t.Errorf("a key in two partitions: %v", err)
	}
	l = newLatest()
	l.add(&kgo.Record{Value: []byte("{}")})
	if _, err := l.live(); err == nil || !strings.Contains(err.Error(), "1 records without a key") {
		t.Errorf("a keyless record: %v", err)
	}
}

func TestKeysDiffCounts(t *testing.T) {
	want := map[string]keyAt{"a": {0, 1}, "b": {0, 2}, "c": {1, 3}}
	got := map[string]keyAt{"a": {0, 1}, "b": {0, 1}, "d": {1, 4}}
	d := keysDiff(want, got)
	if !strings.Contains(d, "3 live keys expected, 3 rows: 1 missing, 1 not live (deleted or never written), 1 not the latest record") {
		t.Errorf("keysDiff:\n%s", d)
	}
}

func TestCaughtUpOffsets(t *testing.T) {
	ends := map[int32]int64{0: 10, 1: 20}
	for _, tc := range []struct {
		name string
		next map[int32]int64
		ok   bool
		err  string
	}{
		{"at the ends", map[int32]int64{0: 10, 1: 20}, true, ""},
		{"one behind", map[int32]int64{0: 10, 1: 19}, false, "partition 1: 19 of 20"},
		{"one unknown", map[int32]int64{0: 10}, false, "partition 1: 0 of 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := caughtUpOffsets(func(p int32) (int64, bool) { n, ok := tc.next[p]; return n, ok }, ends)
			if ok != tc.ok || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("caughtUpOffsets = %v, %v; want %v, %q", ok, err, tc.ok, tc.err)
			}
		})
	}
}

// The keyed table: medians with their spread, and each median's ratio to
// flink's.
func TestMarkdownUpsert(t *testing.T) {
	rep := Report{Events: 1000, Keys: 100, Tombstones: 0.1, LiveKeys: 90, Partitions: 8, CommitInterval: "2s", Results: []Result{
		{Contender: "flink", VisibleSeconds: 10, CPUSeconds: 20, DataRows: 90, DataFiles: 8, ScanMedianSeconds: 0.1},
		{Contender: "native", VisibleSeconds: 30, CPUSeconds: 50, DataRows: 1500, DataFiles: 16, EqDeleteFiles: 8, PosDeleteFiles: 4, ScanMedianSeconds: 0.4},
		{Contender: "flink", VisibleSeconds: 14, CPUSeconds: 30, DataRows: 90, DataFiles: 8, ScanMedianSeconds: 0.2},
		{Contender: "native", VisibleSeconds: 26, CPUSeconds: 40, DataRows: 1500, DataFiles: 16, EqDeleteFiles: 8, PosDeleteFiles: 4, ScanMedianSeconds: 0.4},
		{Contender: "flink", VisibleSeconds: 12, CPUSeconds: 25, DataRows: 90, DataFiles: 8, ScanMedianSeconds: 0.15},
		{Contender: "native", VisibleSeconds: 24, CPUSeconds: 45, DataRows: 1500, DataFiles: 16, EqDeleteFiles: 8, PosDeleteFiles: 4, ScanMedianSeconds: 0.4},
	}}
	md := markdownUpsert(rep)
	for _, want := range []string{
		"1000 updates over 100 keys (10% tombstones; 90 live keys at the end)",
		"| " + labels["flink"] + " | 3 | 12.0 s (10.0–14.0) | 1.00 | 25.0 (20.0–30.0) | 1.00 | 0 MiB | 90 | 8 | 0 | 0 | 0 | 0.15 s (0.10–0.20) |",
		"| " + labels["native"] + " | 3 | 26.0 s (24.0–30.0) | 2.17 | 45.0 (40.0–50.0) | 1.80 | 0 MiB | 1,500 | 16 | 8 | 4 | 0 | 0.40 s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q:\n%s", want, md)
		}
	}
}

// scanKeys reads key -> (partition, offset) through iceberg-go's scan with
// the table's delete files applied, and refuses a key in two rows;
// upsertFiles counts the live files by content; readCost times full scans.
// On a local table of bronze's schema, merge-on-read, so that a delete
// leaves a position delete file.
func TestScanKeysFilesAndReadCost(t *testing.T) {
	ctx := context.Background()
	_, cat := icebergtest.Catalog(t)
	tt := tables.Bronze.As("lakehouse.keyed")
	tt.Properties = map[string]string{"format-version": "2", "write.delete.mode": "merge-on-read"}
	if _, err := icebergio.EnsureTable(ctx, cat, tt); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC).UnixMicro()
	row := func(key string, p int32, off int64) tables.BronzeEvent {
		return tables.BronzeEvent{Timestamp: at, IngestedAt: at, KafkaTopic: "t", KafkaPartition: p, KafkaOffset: off, KafkaKey: []byte(key)}
	}
	tbl := icebergtest.Append(t, icebergtest.Load(t, cat, tt.Ident), []tables.BronzeEvent{row("a", 0, 0), row("b", 1, 3), row("a", 0, 5)}, nil)
	if _, err := scanKeys(ctx, tbl); err == nil || !strings.Contains(err.Error(), `["a"]`) {
		t.Fatalf("key a in two rows: scanKeys = %v, want an error naming it", err)
	}
	// Delete a's older row: a position delete file.
	tx := tbl.NewTransaction()
	if err := tx.Delete(ctx, iceberg.EqualTo(iceberg.Reference("kafka_offset"), int64(0)), nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanKeys(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]keyAt{"a": {0, 5}, "b": {1, 3}}, got); diff != "" {
		t.Errorf("scanKeys (-want +got):\n%s", diff)
	}
	f, err := upsertFiles(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if want := (tableFiles{Data: 1, PosDeletes: 1}); f != want {
		t.Errorf("files %+v, want %+v", f, want)
	}
	secs, err := readCost(ctx, tbl, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 3 || slices.Min(secs) <= 0 {
		t.Errorf("read cost %v: want 3 positive durations", secs)
	}
}
