package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// foreignTopic marks the rows that "another engine" writes in these tests.
const foreignTopic = "written-by-another-engine"

// A topic deleted and created again under the same name starts its offsets
// over. Before topic ids were recorded, bronze resumed the new topic at the
// old topic's offsets and skipped its first records in silence.
func TestRecreatedTopicIsRefusedThenReadFromStart(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(sample(300, 11))
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(badSet())
	first := e.count()

	// Recreate the topic and give it more records than the old one had,
	// so that the old offsets fall inside the new log.
	adm := kadm.NewClient(mustClient(t, e.cfg.Kafka.Brokers))
	ctx := context.Background()
	if _, err := adm.DeleteTopics(ctx, e.cfg.Kafka.Topic); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, func() error { // until the deletion is through
		_, err := adm.CreateTopic(ctx, 2, 1, nil, e.cfg.Kafka.Topic)
		return err
	})
	old := e.produced
	e.produced = map[int64]map[int64][]byte{}
	e.produce(sample(600, 12))

	err := e.runBronze()
	if !errors.Is(err, bronze.ErrRecreated) {
		t.Fatalf("run after the topic was recreated: err = %v, want a refusal", err)
	}
	for _, want := range []string{"--topic=" + e.cfg.Kafka.Topic, "--on-topic-recreated=earliest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	if evs, dls := e.tables(); len(evs)+len(dls) != first {
		t.Fatalf("the refused run changed the tables: %d rows, want %d", len(evs)+len(dls), first)
	}

	e.cfg.OnRecreated = "earliest"
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	// Every record of both topics is there once: the old topic's rows
	// stay, the new topic is read from its start. Their coordinates
	// coincide, so each (partition, offset) is there once per topic that
	// had it.
	want := map[[2]int64]int{}
	for _, set := range []map[int64]map[int64][]byte{old, e.produced} {
		for p, offs := range set {
			for o := range offs {
				want[[2]int64{p, o}]++
			}
		}
	}
	evs, dls := e.tables()
	got := map[[2]int64]int{}
	for _, ev := range evs {
		got[[2]int64{int64(ev.KafkaPartition), ev.KafkaOffset}]++
	}
	for _, dl := range dls {
		got[[2]int64{int64(dl.KafkaPartition), dl.KafkaOffset}]++
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("after --on-topic-recreated=earliest, rows per (partition, offset) (-want +got):\n%s", diff)
	}
	// A later run without the flag finds the new topic's id recorded.
	e.cfg.OnRecreated = "fail"
	if err := e.runBronze(); err != nil {
		t.Fatalf("run after the new topic's id was recorded: %v", err)
	}
	if evs2, dls2 := e.tables(); len(evs2)+len(dls2) != len(evs)+len(dls) {
		t.Fatalf("a run with nothing new changed the row count: %d, want %d", len(evs2)+len(dls2), len(evs)+len(dls))
	}
}

// Another engine writes to the table, then expires every snapshot but the
// current one (as Spark's or Trino's expire_snapshots can). No snapshot of
// bronze's is left, yet its next run reads only what is new.
func TestForeignWriteAndExpiryKeepOffsets(t *testing.T) {
	for _, ident := range []string{"lakehouse.bronze_events", "lakehouse.bronze_events_dlq"} {
		t.Run(ident, func(t *testing.T) {
			e := newEnv(t, 3)
			e.produce(sample(500, 21))
			if err := e.runBronze(); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(badSet())

			foreignAppendAndExpire(t, e.cfg.Catalog, ident)

			e.produce(sample(400, 22))
			if err := e.runBronze(); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(badSet())
		})
	}
}

// foreignAppendAndExpire appends one row with no haade summary, as another
// engine's INSERT would, then expires every older snapshot.
func foreignAppendAndExpire(t *testing.T, cfg icebergio.CatalogConfig, ident string) {
	t.Helper()
	ctx := context.Background()
	cat, err := cfg.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := icebergio.Identifier(ident)
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var rows any
	now := time.Now().UnixMicro()
	if strings.HasSuffix(ident, "_dlq") {
		rows = []tables.DeadLetter{{Payload: []byte("x"), Error: "foreign", KafkaTopic: foreignTopic, IngestedAt: now}}
	} else {
		rows = []tables.BronzeEvent{{Timestamp: now, IngestedAt: now, KafkaTopic: foreignTopic}}
	}
	tbl = icebergtest.Append(t, tbl, rows, nil)
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(1), table.WithOlderThan(0)); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("after the foreign expiry %s has %d snapshots, want 1", ident, n)
	}
	if s := tbl.CurrentSnapshot(); s.Summary != nil && s.Summary.Properties[icebergio.SummaryOffsets] != "" {
		t.Fatalf("the foreign snapshot carries offsets: %v", s.Summary.Properties)
	}
}

func mustClient(t *testing.T, brokers []string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// A second pipeline id on tables another one feeds would store every record
// twice: it is refused, in one line that says another writer, unless
// --allow-second-pipeline-id says it is meant.
func TestSecondPipelineIDIsRefused(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(sample(200, 31))
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.cfg.Pipeline = "bronze-copy"
	err := e.runBronze()
	if !errors.Is(err, bronze.ErrSecondPipeline) {
		t.Fatalf("a second pipeline id: err = %v, want a refusal", err)
	}
	for _, want := range []string{"another writer", "--pipeline-id=bronze-copy", "pipeline id bronze", "--allow-second-pipeline-id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	e.checkExactlyOnce(badSet())
	e.cfg.AllowSecondPipeline = true
	if err := e.runBronze(); err != nil {
		t.Fatalf("with --allow-second-pipeline-id: %v", err)
	}
	if evs, dls := e.tables(); len(evs)+len(dls) != 2*e.count() {
		t.Fatalf("with --allow-second-pipeline-id: %d rows, want every record twice (%d)", len(evs)+len(dls), 2*e.count())
	}
}

// The embedded demo runs twice into the same ./lakehouse: its in-process
// broker, and so its topic id, is new each time, and the second run reads
// the new topic from its start instead of refusing it.
func TestDemoRunsTwice(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--demo", "--metrics-addr=", "--demo-events=300", "--catalog-uri=" + dir + "/catalog.db", "--warehouse=" + dir + "/warehouse"}
	cfg := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: dir + "/catalog.db", Warehouse: dir + "/warehouse"}
	for i := 1; i <= 2; i++ {
		var out, errb cmdtest.Buffer
		if code := run(args, func(string) string { return "" }, &out, &errb); code != 0 {
			t.Fatalf("demo run %d: exit %d\n%s", i, code, errb.String())
		}
		// Each run produces 300 events and a tombstone, each in one table.
		// Two runs within one commit interval reach the same offsets: the
		// second one's rows must not be taken for the first one's.
		var evs []tables.BronzeEvent
		var dls []tables.DeadLetter
		if err := icebergio.ScanRows(context.Background(), cfg, "lakehouse.bronze_events", &evs); err != nil {
			t.Fatal(err)
		}
		if err := icebergio.ScanRows(context.Background(), cfg, "lakehouse.bronze_events_dlq", &dls); err != nil {
			t.Fatal(err)
		}
		if got, want := len(evs)+len(dls), i*301; got != want {
			t.Fatalf("after demo run %d: %d rows, want %d", i, got, want)
		}
	}
}
