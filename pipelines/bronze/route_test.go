package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	debtTopic    = "fintech.debt.raw"
	ratingsTopic = "fintech.ratings.raw"
	routes       = "kafka_topic=" + ratingsTopic + "&type=rating|outlook:lakehouse.ratings_{type}, kafka_topic=" + debtTopic + ":lakehouse.debt_events"
)

// routedEnv is env with a second topic and the routes above.
type routedEnv struct {
	*env
	cl       *kgo.Client
	produced map[string]string // "topic/partition/offset" -> value ("" for a tombstone)
}

func newRoutedEnv(t *testing.T) *routedEnv {
	e := newEnv(t, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cfg.Kafka.Brokers...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, ratingsTopic); err != nil {
		t.Fatal(err)
	}
	e.cfg.Kafka.Topic = debtTopic + "," + ratingsTopic
	e.cfg.Demo = false // newEnv parsed no flag, then set the brokers
	if e.cfg.Routes, err = route.Parse(routes); err != nil {
		t.Fatal(err)
	}
	if err := e.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &routedEnv{env: e, cl: cl, produced: map[string]string{}}
}

// produceRouted produces n records to each topic: events of the types
// rating, outlook and other, a malformed record now and then, and one
// tombstone.
func (e *routedEnv) produceRouted(n int, seed int) {
	e.t.Helper()
	types := []string{"rating", "outlook", "other"}
	for _, topic := range []string{debtTopic, ratingsTopic} {
		for i := range n {
			var v []byte
			switch {
			case i == n-1:
				v = nil // a tombstone
			case (i+seed)%17 == 0:
				v = []byte(`{"source": "news", "title": `) // malformed
			default:
				v = fmt.Appendf(nil, `{"source":"news","title":"t%d","timestamp":"2026-05-19T10:00:00Z","type":%q}`, i+seed, types[(i+seed)%3])
			}
			r, err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).First()
			if err != nil {
				e.t.Fatal(err)
			}
			e.produced[fmt.Sprintf("%s/%d/%d", topic, r.Partition, r.Offset)] = string(v)
		}
	}
}

// wantTable says, independently of transforms/route, where a record
// belongs: the table of its route, or the dead letters with a reason.
func wantTable(topic, value string) (table, reason string) {
	if value == "" {
		return tables.DeadLetters.Ident, parse.Tombstone
	}
	var m map[string]any
	if json.Unmarshal([]byte(value), &m) != nil {
		return tables.DeadLetters.Ident, "syntax"
	}
	switch {
	case topic == ratingsTopic && (m["type"] == "rating" || m["type"] == "outlook"):
		return "lakehouse.ratings_" + m["type"].(string), ""
	case topic == debtTopic:
		return "lakehouse.debt_events", ""
	}
	return tables.DeadLetters.Ident, route.Unrouted
}

// checkRouted asserts that every record produced is in the table its
// route names, once, and that no table holds anything else.
func (e *routedEnv) checkRouted() {
	t := e.t
	t.Helper()
	got := map[string][]string{} // record -> tables it is in
	for _, ident := range e.cfg.EventTables() {
		var evs []tables.BronzeEvent
		if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, ident, &evs); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			k := fmt.Sprintf("%s/%d/%d", ev.KafkaTopic, ev.KafkaPartition, ev.KafkaOffset)
			got[k] = append(got[k], ident)
			if ev.Title == nil || !strings.Contains(e.produced[k], fmt.Sprintf(`"title":%q`, *ev.Title)) {
				t.Errorf("%s: row %s has title %v, produced %s", ident, k, ev.Title, e.produced[k])
			}
		}
	}
	var dls []tables.DeadLetter
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.DLQTable, &dls); err != nil {
		t.Fatal(err)
	}
	for _, dl := range dls {
		k := fmt.Sprintf("%s/%d/%d", dl.KafkaTopic, dl.KafkaPartition, dl.KafkaOffset)
		got[k] = append(got[k], e.cfg.DLQTable)
		_, wantReason := wantTable(dl.KafkaTopic, e.produced[k])
		if reason, _ := parse.SplitError(dl.Error); reason != wantReason {
			t.Errorf("dead letter %s: reason %q (%s), want %q", k, reason, dl.Error, wantReason)
		}
		if string(dl.Payload) != e.produced[k] {
			t.Errorf("dead letter %s: payload %q, produced %q", k, dl.Payload, e.produced[k])
		}
	}
	var wrong []string
	for k, v := range e.produced {
		topic, _, _ := strings.Cut(k, "/")
		want, _ := wantTable(topic, v)
		if diff := cmp.Diff([]string{want}, got[k]); diff != "" {
			wrong = append(wrong, fmt.Sprintf("%s in %v, want [%s]", k, got[k], want))
		}
		delete(got, k)
	}
	for k, in := range got {
		wrong = append(wrong, fmt.Sprintf("%s in %v was never produced", k, in))
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		t.Fatalf("%d records not once in their table, first %v", len(wrong), head(wrong))
	}
}

// One run reads two topics and routes by topic and by a member of the
// event into three tables and the dead letters; a second run goes on from
// the offsets all four hold.
func TestRoutesTwoTopicsToTables(t *testing.T) {
	e := newRoutedEnv(t)
	e.produceRouted(300, 0)
	pl, err := e.runBronzePlan()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pl.Sources), 2; got != want {
		t.Fatalf("%d sources, want %d", got, want)
	}
	if diff := cmp.Diff([]string{"lakehouse.ratings_rating", "lakehouse.ratings_outlook", "lakehouse.debt_events"}, e.cfg.EventTables()); diff != "" {
		t.Fatalf("tables (-want +got):\n%s", diff)
	}
	e.checkRouted()
	// Every table holds every offset of both topics, its windows without
	// rows included.
	stats, err := bronze.TableStats(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, ident := range e.cfg.AllTables() {
		if diff := cmp.Diff(pl.End, stats[i].Offsets); diff != "" {
			t.Errorf("%s holds offsets (-read +held):\n%s", ident, diff)
		}
	}
	e.produceRouted(200, 1)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	e.checkRouted()
}

// A crash between writing a window's files and committing them to one of
// the routed tables, after others of the same window committed: the next
// run writes that table's rows once, and the tables that committed drop
// theirs.
func TestRoutedCrashThenRestart(t *testing.T) {
	e := newRoutedEnv(t)
	e.produceRouted(400, 2)
	crash := errors.New("injected crash before commit")
	remove := inject.At(inject.BeforeCommit("lakehouse.ratings_outlook"), func(icebergio.FileSet) error { return crash })
	_, err := e.runBronzePlan()
	remove()
	if err == nil {
		t.Fatal("the run with a crash before a commit succeeded")
	}
	e.produceRouted(100, 3)
	if _, err := e.restartAfterCrash(); err != nil {
		t.Fatal(err)
	}
	e.checkRouted()
}

// A routed table that is dropped and created again holds none of its rows:
// the next run reads both topics from their start for it, and the others
// drop what they hold.
func TestRoutedTableRecreated(t *testing.T) {
	e := newRoutedEnv(t)
	e.produceRouted(300, 4)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.DropTable(context.Background(), catalog.ToIdentifier("lakehouse.ratings_rating")); err != nil {
		t.Fatal(err)
	}
	icebergio.CloseCatalog(cat)
	e.produceRouted(100, 5)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	e.checkRouted()
}
