package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/tables"
)

// regionRow reads the promoted columns of bronze back, by their current
// names.
type regionRow struct {
	KafkaPartition int32   `iceberg:"kafka_partition,required"`
	KafkaOffset    int64   `iceberg:"kafka_offset,required"`
	Region         *string `iceberg:"region"`
	Area           *string `iceberg:"area"`
	Amount         *int64  `iceberg:"amount"`
	Extra          *string `iceberg:"extra"`
}

func regionEvent(i int, region any, amount any) []byte {
	m := map[string]any{"source": "s", "title": fmt.Sprintf("t%d", i), "timestamp": "2026-05-19T10:00:00Z", "n": i}
	if region != nil {
		m["region"] = region
	}
	if amount != nil {
		m["amount"] = amount
	}
	b, _ := json.Marshal(m)
	return b
}

func (e *env) evolve(ch icebergio.Change) icebergio.EvolveReport {
	e.t.Helper()
	ctx := context.Background()
	cat, err := e.cfg.Catalog.Open(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer closeCatalogForTest(cat)
	rep, err := icebergio.Evolve(ctx, cat, e.cfg.Table, ch)
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

func closeCatalogForTest(cat any) {
	if c, ok := cat.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// members decodes a JSON object text (nil: none) with encoding/json.
func members(t *testing.T, s *string) map[string]any {
	t.Helper()
	if s == nil {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(*s), &m); err != nil {
		t.Fatalf("extra %q: %v", *s, err)
	}
	return m
}

// TestPromoteWidenRename runs bronze, promotes region and amount, runs it
// again, widens amount, renames region, runs it a third time, and checks
// every record: each member is in exactly one place (its column from the
// run after its promotion, extra before), a value of the wrong type stays
// in extra, and a read into tables.BronzeEvent folds the columns back into Extra
// as the event had them.
func TestPromoteWidenRename(t *testing.T) {
	e := newEnv(t, 2)
	var sent [][]byte
	send := func(vs ...[]byte) { e.produce(vs); sent = append(sent, vs...) }

	for i := 0; i < 20; i++ {
		send(regionEvent(i, "eu", i))
	}
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	rep := e.evolve(icebergio.Change{Promote: []icebergio.Promotion{
		{Column: "region", Type: iceberg.PrimitiveTypes.String}, {Column: "amount", Type: iceberg.PrimitiveTypes.Int32}}})
	if len(rep.Applied) != 2 || rep.SchemaID == rep.Before {
		t.Fatalf("evolve: %+v", rep)
	}
	// Again: nothing to do.
	if rep := e.evolve(icebergio.Change{Promote: []icebergio.Promotion{{Column: "region", Type: iceberg.PrimitiveTypes.String}}}); len(rep.Applied) != 0 || len(rep.Unchanged) != 1 {
		t.Fatalf("second promote: %+v", rep)
	}
	for i := 20; i < 40; i++ {
		send(regionEvent(i, "us", i))
	}
	send(regionEvent(40, 7, "not a number"), regionEvent(41, nil, int64(1)<<40)) // wrong types: kept in extra
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.evolve(icebergio.Change{Widen: []icebergio.Widening{{Column: "amount", Type: iceberg.PrimitiveTypes.Int64}}})
	e.evolve(icebergio.Change{Rename: []icebergio.Renaming{{From: "region", To: "area"}}})
	for i := 42; i < 60; i++ {
		send(regionEvent(i, "apac", int64(1)<<40+int64(i)))
	}
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}

	var rows []regionRow
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.Table, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sent) {
		t.Fatalf("%d rows, sent %d", len(rows), len(sent))
	}
	byN := map[int]regionRow{}
	var evs []tables.BronzeEvent
	if err := icebergio.ScanRows(context.Background(), e.cfg.Catalog, e.cfg.Table, &evs); err != nil {
		t.Fatal(err)
	}
	extraByKey := map[[2]int64]*string{}
	for _, ev := range evs {
		extraByKey[[2]int64{int64(ev.KafkaPartition), ev.KafkaOffset}] = ev.Extra
	}
	for _, r := range rows {
		if r.Region != nil {
			t.Errorf("column region still read after the rename: %+v", r)
		}
		n := int(members(t, r.Extra)["n"].(float64))
		byN[n] = r
		// Folded back: the event's members other than the three, whole.
		var want map[string]any
		_ = json.Unmarshal(sent[n], &want)
		delete(want, "source")
		delete(want, "title")
		delete(want, "timestamp")
		if diff := cmp.Diff(want, members(t, extraByKey[[2]int64{int64(r.KafkaPartition), r.KafkaOffset}])); diff != "" {
			t.Errorf("event %d read as tables.BronzeEvent: extra (-want +got):\n%s", n, diff)
		}
	}
	str := func(s string) *string { return &s }
	i64 := func(v int64) *int64 { return &v }
	for n := 0; n < 60; n++ {
		r, ok := byN[n]
		if !ok {
			t.Errorf("event %d missing", n)
			continue
		}
		ex := members(t, r.Extra)
		var wantArea *string
		var wantAmount *int64
		wantInExtra := []string{"n"}
		switch {
		case n < 20:
			wantInExtra = append(wantInExtra, "region", "amount")
		case n < 40:
			wantArea, wantAmount = str("us"), i64(int64(n))
		case n == 40:
			wantInExtra = append(wantInExtra, "region", "amount")
		case n == 41:
			wantInExtra = append(wantInExtra, "amount") // 2^40 is no int
		default:
			wantArea, wantAmount = str("apac"), i64(int64(1)<<40+int64(n))
		}
		var got []string
		for k := range ex {
			got = append(got, k)
		}
		sort.Strings(got)
		sort.Strings(wantInExtra)
		if diff := cmp.Diff(wantInExtra, got); diff != "" {
			t.Errorf("event %d: members in extra (-want +got):\n%s", n, diff)
		}
		if diff := cmp.Diff(wantArea, r.Area); diff != "" {
			t.Errorf("event %d: area (-want +got):\n%s", n, diff)
		}
		if diff := cmp.Diff(wantAmount, r.Amount); diff != "" {
			t.Errorf("event %d: amount (-want +got):\n%s", n, diff)
		}
	}
}

// TestEvolveRefuses checks the changes that would lose or misplace data.
func TestEvolveRefuses(t *testing.T) {
	e := newEnv(t, 1)
	e.produce([][]byte{regionEvent(0, "eu", 1)})
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	e.evolve(icebergio.Change{Promote: []icebergio.Promotion{{Column: "region", Type: iceberg.PrimitiveTypes.String},
		{Column: "score", Type: iceberg.PrimitiveTypes.Float32}}})
	ctx := context.Background()
	cat, err := e.cfg.Catalog.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCatalogForTest(cat)
	for _, c := range []struct {
		name string
		ch   icebergio.Change
	}{
		{"rename a column bronze writes", icebergio.Change{Rename: []icebergio.Renaming{{From: "source", To: "src"}}}},
		{"widen a column bronze writes", icebergio.Change{Widen: []icebergio.Widening{{Column: "kafka_partition", Type: iceberg.PrimitiveTypes.Int64}}}},
		{"widen string to long", icebergio.Change{Widen: []icebergio.Widening{{Column: "region", Type: iceberg.PrimitiveTypes.Int64}}}},
		{"narrow float to int", icebergio.Change{Widen: []icebergio.Widening{{Column: "score", Type: iceberg.PrimitiveTypes.Int32}}}},
		{"promote onto a column bronze writes", icebergio.Change{Promote: []icebergio.Promotion{{Column: "title", Type: iceberg.PrimitiveTypes.String}}}},
		{"promote again with another type", icebergio.Change{Promote: []icebergio.Promotion{{Column: "region", Type: iceberg.PrimitiveTypes.Int64}}}},
		{"rename onto a column", icebergio.Change{Rename: []icebergio.Renaming{{From: "region", To: "title"}}}},
		{"a dotted name", icebergio.Change{Promote: []icebergio.Promotion{{Column: "geo.region", Type: iceberg.PrimitiveTypes.String}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := icebergio.Evolve(ctx, cat, e.cfg.Table, c.ch); !errors.Is(err, icebergio.ErrEvolve) {
				t.Fatalf("got %v, want ErrEvolve", err)
			}
		})
	}
	// The dead-letter table has no extra to promote from.
	if _, err := icebergio.Evolve(ctx, cat, e.cfg.DLQTable, icebergio.Change{Promote: []icebergio.Promotion{{Column: "region", Type: iceberg.PrimitiveTypes.String}}}); !errors.Is(err, icebergio.ErrEvolve) {
		t.Fatalf("dead-letter table: got %v, want ErrEvolve", err)
	}
	// Bronze still starts on the table and lands a new event.
	e.produce([][]byte{regionEvent(1, "us", 2)})
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	if n := e.count(); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}
