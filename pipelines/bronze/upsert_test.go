package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/inject"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keyedProducer produces keyed updates and keeps, as the truth, the latest
// title of each key (by offset: a key always lands in one partition) and
// the dead letters it expects.
type keyedProducer struct {
	t      *testing.T
	cl     *kgo.Client
	topic  string
	latest map[string]string // key -> title; absent when deleted
	noKey  int
}

func (k *keyedProducer) send(key, value []byte) {
	k.t.Helper()
	if _, err := k.cl.ProduceSync(context.Background(), &kgo.Record{Topic: k.topic, Key: key, Value: value}).First(); err != nil {
		k.t.Fatal(err)
	}
}

// round sends n updates over keys keys, every 7th a tombstone, every 11th
// an event with "op": "delete", and one record without a key.
func (k *keyedProducer) round(n, keys, seed int) {
	for i := range n {
		key := fmt.Sprintf("debtor-%d", (i*7+seed)%keys)
		switch {
		case (i+seed)%7 == 0:
			k.send([]byte(key), nil)
			delete(k.latest, key)
		case (i+seed)%11 == 0:
			k.send([]byte(key), fmt.Appendf(nil, `{"source":"ledger","title":"gone","timestamp":"2026-05-19T10:00:00Z","op":"delete"}`))
			delete(k.latest, key)
		default:
			title := fmt.Sprintf("status %d.%d", seed, i)
			k.send([]byte(key), fmt.Appendf(nil, `{"source":"ledger","title":%q,"timestamp":"2026-05-19T10:00:00Z","op":"upsert"}`, title))
			k.latest[key] = title
		}
	}
	k.send(nil, []byte(`{"source":"ledger","title":"no key","timestamp":"2026-05-19T10:00:00Z"}`))
	k.noKey++
}

func newUpsertEnv(t *testing.T) (*env, *keyedProducer) {
	e := newEnv(t, 3)
	e.cfg.Upsert = true
	e.cfg.Table = "lakehouse.debt_state"
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cfg.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return e, &keyedProducer{t: t, cl: cl, topic: e.cfg.Kafka.Topic, latest: map[string]string{}}
}

// checkLatest asserts that the table holds exactly the latest event of
// every live key, once, and that the records without a key are dead
// letters with their reason (tombstones are deletes, not dead letters).
func checkLatest(t *testing.T, e *env, k *keyedProducer) {
	t.Helper()
	var evs []tables.BronzeEvent
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.Table, &evs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ev := range evs {
		key := string(ev.KafkaKey)
		if _, dup := got[key]; dup {
			t.Errorf("key %s is live twice", key)
		}
		got[key] = *ev.Title
	}
	if diff := cmp.Diff(k.latest, got); diff != "" {
		t.Errorf("live rows, key -> title (-want +got):\n%s", diff)
	}
	// Copy-on-write: the data files hold the live rows and nothing else.
	stats, err := bronze.TableStats(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if stats[0].Rows != int64(len(k.latest)) || stats[0].Deletes != 0 {
		t.Errorf("TableStats: %d rows, %d position deletes; want %d live rows and no delete", stats[0].Rows, stats[0].Deletes, len(k.latest))
	}
	var dls []tables.DeadLetter
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.DLQTable, &dls); err != nil {
		t.Fatal(err)
	}
	noKey := 0
	for _, dl := range dls {
		if reason, _ := parse.SplitError(dl.Error); reason != parse.NoKey {
			t.Errorf("dead letter at %d/%d: %s, want only %s", dl.KafkaPartition, dl.KafkaOffset, dl.Error, parse.NoKey)
		}
		noKey++
	}
	if noKey != k.noKey {
		t.Errorf("%d dead letters, want %d records without a key", noKey, k.noKey)
	}
}

// --upsert: the table keeps the latest event of each Kafka key; tombstones
// and "op": "delete" remove the key; a later run applies later updates.
func TestUpsertKeepsLatestPerKey(t *testing.T) {
	e, k := newUpsertEnv(t)
	k.round(400, 60, 1)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	checkLatest(t, e, k)
	k.round(300, 60, 2)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	checkLatest(t, e, k)
}

// A crash before a window's commit, then a run from the tables' offsets:
// nothing deleted twice, nothing brought back, every key at its latest.
func TestUpsertCrashThenRestart(t *testing.T) {
	e, k := newUpsertEnv(t)
	k.round(300, 40, 3)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	k.round(300, 40, 4)
	crash := errors.New("injected crash before commit")
	remove := inject.At(inject.BeforeCommit(e.cfg.Table), func(icebergio.FileSet) error { return crash })
	_, err := e.runBronzePlan()
	remove()
	if err == nil {
		t.Fatal("the run with a crash before the commit succeeded")
	}
	k.round(200, 40, 5)
	if _, err := e.restartAfterCrash(); err != nil {
		t.Fatal(err)
	}
	checkLatest(t, e, k)
}

// routedKeys is keyedProducer for --upsert with --route by a member: the
// truth is each key's table and title, and the records that are dead
// letters.
type routedKeys struct {
	*keyedProducer
	where    map[string]string // key -> table of its latest routed event
	unrouted int
}

// round sends n updates over keys keys whose type moves them between
// tables, every 9th a tombstone, every 13th of a type no rule routes.
func (k *routedKeys) round(n, keys, seed int) {
	types := []string{"rating", "outlook"}
	for i := range n {
		key := fmt.Sprintf("issuer-%d", (i*5+seed)%keys)
		switch {
		case (i+seed)%9 == 0:
			k.send([]byte(key), nil)
			delete(k.latest, key)
			delete(k.where, key)
		case (i+seed)%13 == 0:
			// A dead letter: the key's row, wherever it is, stays.
			k.send([]byte(key), fmt.Appendf(nil, `{"source":"agency","title":"x","timestamp":"2026-05-19T10:00:00Z","type":"watch"}`))
			k.unrouted++
		default:
			typ := types[(i/7+seed)%2] // a key comes back every 8 updates, often of the other type
			title := fmt.Sprintf("%s %d.%d", typ, seed, i)
			k.send([]byte(key), fmt.Appendf(nil, `{"source":"agency","title":%q,"timestamp":"2026-05-19T10:00:00Z","type":%q}`, title, typ))
			k.latest[key] = title
			k.where[key] = "lakehouse.state_" + typ
		}
	}
}

// check asserts that each table holds exactly the keys whose latest routed
// event went there, at that event, once: a key lives in one table.
func (k *routedKeys) check(t *testing.T, e *env) {
	t.Helper()
	want := map[string]map[string]string{}
	for key, table := range k.where {
		if want[table] == nil {
			want[table] = map[string]string{}
		}
		want[table][key] = k.latest[key]
	}
	for _, table := range e.cfg.Routes.Tables() {
		var evs []tables.BronzeEvent
		if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, table, &evs); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, ev := range evs {
			if _, dup := got[string(ev.KafkaKey)]; dup {
				t.Errorf("%s: key %s is live twice", table, ev.KafkaKey)
			}
			got[string(ev.KafkaKey)] = *ev.Title
		}
		w := want[table]
		if w == nil {
			w = map[string]string{}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s: live rows, key -> title (-want +got):\n%s", table, diff)
		}
	}
	var dls []tables.DeadLetter
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.DLQTable, &dls); err != nil {
		t.Fatal(err)
	}
	if len(dls) != k.unrouted {
		t.Errorf("%d dead letters, want %d unrouted events", len(dls), k.unrouted)
	}
}

// --upsert with --route by a member: a key whose type changes moves to the
// other table (deleted from the one it left), a tombstone deletes it from
// both, an unrouted event is a dead letter and changes no table; a crash
// before one table's commit, then a restart, changes none of that.
func TestUpsertRoutedKeysMove(t *testing.T) {
	e, kp := newUpsertEnv(t)
	var err error
	if e.cfg.Routes, err = route.Parse("type=rating|outlook:lakehouse.state_{type}"); err != nil {
		t.Fatal(err)
	}
	e.cfg.Demo = false // newEnv parsed no flag, then set the brokers
	if err := e.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	k := &routedKeys{keyedProducer: kp, where: map[string]string{}}
	k.round(300, 40, 1)
	if _, err := e.runBronzePlan(); err != nil {
		t.Fatal(err)
	}
	k.check(t, e)
	k.round(300, 40, 2)
	crash := errors.New("injected crash before commit")
	remove := inject.At(inject.BeforeCommit("lakehouse.state_outlook"), func(icebergio.FileSet) error { return crash })
	_, err = e.runBronzePlan()
	remove()
	if err == nil {
		t.Fatal("the run with a crash before the commit succeeded")
	}
	k.round(200, 40, 3)
	if _, err := e.restartAfterCrash(); err != nil {
		t.Fatal(err)
	}
	k.check(t, e)
}
