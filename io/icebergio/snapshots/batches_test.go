package snapshots_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/silver"
	"github.com/haade/haade/transforms/tables"
)

// silverSnapshot and silverDay are batch types as a transforms package
// would declare them.
type silverSnapshot struct {
	Range      offsets.Range
	SnapshotID int64
	Rows       []tables.SilverEvent
}

type silverDay struct {
	Day  int64
	Rows []tables.SilverEvent
}

func init() {
	beam.RegisterType(reflect.TypeOf(silverSnapshot{}))
	beam.RegisterType(reflect.TypeOf(silverDay{}))
	register.Function1x1(describeSnapshot)
	register.Function1x1(describeDay)
	register.Function1x1(sourceOf)
	register.Function2x1(toKV)
	beam.RegisterType(reflect.TypeOf(kv{}))
}

func describeSnapshot(b silverSnapshot) string {
	s := fmt.Sprintf("%v snapshot=%v:", b.Range, b.SnapshotID != 0)
	for _, r := range b.Rows {
		s += " " + r.Title
	}
	return s
}

func sourceOf(r tables.SilverEvent) string { return r.Source }

// kv is stats.Count's KV<string,int> as a struct, for passert.Equals.
type kv struct {
	K string
	V int
}

func toKV(k string, v int) kv { return kv{k, v} }

func describeDay(b silverDay) string { return fmt.Sprintf("day %d: %d rows", b.Day, len(b.Rows)) }

// TestSnapshotBatchesAndReadDayBatches reads two appended snapshots as
// batches with their ranges, and the days they touch as one batch a day.
func TestSnapshotBatchesAndReadDayBatches(t *testing.T) {
	ctx := context.Background()
	cfg, _ := icebergtest.Catalog(t)
	const ident = "lakehouse.silver_events"
	sink, err := icebergio.Open(ctx, cfg, tables.Silver, "test")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 5, 19, 0, 0, 0, 0, time.UTC)
	at := func(h int) int64 { return day.Add(time.Duration(h) * time.Hour).UnixMicro() }
	for i, rows := range [][]tables.SilverEvent{
		{{Source: "news", Title: "A", Timestamp: at(1)}, {Source: "news", Title: "B", Timestamp: at(30)}},
		{{Source: "ft", Title: "C", Timestamp: at(2)}},
	} {
		p, s := beam.NewPipelineWithRoot()
		start := offsets.Offsets{}
		start.Set("k", 0, int64(i))
		icebergio.Write(s, sink, start, beam.Create(s, silver.Batch{Source: offsets.Range{Topic: "k", Start: int64(i), End: int64(i + 1)}, Rows: rows}))
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := snapshots.CurrentSequence(ctx, cfg, ident)
	if err != nil || cur != 2 {
		t.Fatalf("CurrentSequence = %d, %v; want 2", cur, err)
	}

	p, s := beam.NewPipelineWithRoot()
	snaps := snapshots.ReadSnapshots(s, snapshots.Source{Catalog: cfg, Ident: ident, Bounded: true, Until: cur})
	passert.Equals(s, beam.ParDo(s, describeSnapshot, snapshots.SnapshotBatches(s, snaps, silverSnapshot{})),
		"iceberg:lakehouse.silver_events/0[1,2) snapshot=true: A B",
		"iceberg:lakehouse.silver_events/0[2,3) snapshot=true: C")
	// Rows: one element per row, so Beam's own stats.Count counts them.
	counted := stats.Count(s, beam.ParDo(s, sourceOf, snapshots.Rows(s, snaps, tables.SilverEvent{})))
	passert.Equals(s, beam.ParDo(s, toKV, counted), kv{"news", 2}, kv{"ft", 1})
	touched := snapshots.TouchedDays(s, snaps, tables.SilverEvent{}, "timestamp")
	d := day.Unix() / 86400
	passert.Equals(s, beam.ParDo(s, describeDay, snapshots.ReadDayBatches(s, cfg, ident, silverDay{}, "timestamp", touched)),
		fmt.Sprintf("day %d: 2 rows", d), fmt.Sprintf("day %d: 1 rows", d+1))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func TestBatchTypesAreCheckedAtConstruction(t *testing.T) {
	type noRows struct{ Range offsets.Range }
	type badRange struct {
		Range string
		Rows  []tables.SilverEvent
	}
	for name, batch := range map[string]any{"no Rows": noRows{}, "Range not a Range": badRange{}, "not a struct": 7} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("SnapshotBatches took %T", batch)
				}
			}()
			_, s := beam.NewPipelineWithRoot()
			snapshots.SnapshotBatches(s, beam.Create(s, snapshots.SnapshotRows{}), batch)
		})
	}
}

// OverwriteDays refuses an unbounded input at construction, and takes a
// bounded read.
func TestOverwriteDaysRefusesUnbounded(t *testing.T) {
	ctx := context.Background()
	cfg, _ := icebergtest.Catalog(t)
	out, err := icebergio.Open(ctx, cfg, tables.GoldSourceDaily, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := icebergio.Open(ctx, cfg, tables.Silver, "test"); err != nil {
		t.Fatal(err)
	}
	build := func(bounded bool) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(error); ok {
					err = e
				} else {
					err = fmt.Errorf("%v", r)
				}
			}
		}()
		_, s := beam.NewPipelineWithRoot()
		snaps := snapshots.ReadSnapshots(s, snapshots.Source{Catalog: cfg, Ident: tables.Silver.Ident, Bounded: bounded})
		icebergio.OverwriteDays(s, out, "day", offsets.Offsets{}, snapshots.Rows(s, snaps, tables.SourceDaily{}))
		return nil
	}
	if err := build(false); !errors.Is(err, icebergio.ErrUnbounded) {
		t.Errorf("unbounded input: %v, want ErrUnbounded", err)
	}
	if err := build(true); err != nil {
		t.Errorf("bounded input: %v", err)
	}
}
