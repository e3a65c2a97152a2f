package icebergio_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// bronzeBefore is bronze's row as it was before kafka_key, kafka_headers
// and kafka_timestamp_type.
type bronzeBefore struct {
	Source         *string `iceberg:"source"`
	Title          *string `iceberg:"title"`
	Timestamp      int64   `iceberg:"timestamp,required,timestamptz"`
	IngestedAt     int64   `iceberg:"ingested_at,required,timestamptz"`
	KafkaTopic     string  `iceberg:"kafka_topic,required"`
	KafkaPartition int32   `iceberg:"kafka_partition,required"`
	KafkaOffset    int64   `iceberg:"kafka_offset,required"`
	KafkaTimestamp *int64  `iceberg:"kafka_timestamp,timestamptz"`
	Extra          *string `iceberg:"extra,overflow"`
}

// A bronze table made before the key, header and timestamp-type columns
// gains them through schema evolution when bronze opens it: optional
// columns, nothing rewritten (the snapshot stays), null in the old rows;
// new rows keep their key, their headers (order, repeated keys, null and
// empty values) and their timestamp type.
func TestEnsureTableAddsNewColumns(t *testing.T) {
	ctx := context.Background()
	cfg, cat := icebergtest.Catalog(t)
	old := tables.Bronze
	old.Row = bronzeBefore{}
	tbl, err := icebergio.EnsureTable(ctx, cat, old)
	if err != nil {
		t.Fatal(err)
	}
	us := func(v int64) *int64 { return &v }
	news := "news"
	tbl = icebergtest.Append(t, tbl, []bronzeBefore{{Source: &news, Timestamp: 1, IngestedAt: 2, KafkaTopic: "t", KafkaOffset: 0, KafkaTimestamp: us(-5000)}}, nil)
	snap, schemaBefore := tbl.CurrentSnapshot().SnapshotID, tbl.Schema().ID

	tbl, err = icebergio.EnsureTable(ctx, cat, tables.Bronze)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Schema().ID == schemaBefore {
		t.Fatalf("schema id %d: the table did not evolve", schemaBefore)
	}
	if got := tbl.CurrentSnapshot().SnapshotID; got != snap {
		t.Errorf("current snapshot %d, was %d: evolution must not rewrite or append", got, snap)
	}
	types := map[string]string{}
	for _, name := range []string{"kafka_key", "kafka_headers", "kafka_timestamp_type"} {
		f, ok := tbl.Schema().FindFieldByName(name)
		if !ok || f.Required {
			t.Fatalf("column %s: found %v, required %v; want an optional column", name, ok, f.Required)
		}
		types[name] = f.Type.String()
	}
	wantTypes := map[string]string{"kafka_key": "binary", "kafka_headers": "list<struct<13: key: required string, 14: value: optional binary>>", "kafka_timestamp_type": "string"}
	if d := cmp.Diff(wantTypes, types); d != "" {
		t.Errorf("new columns' types (-want +got):\n%s", d)
	}
	again, err := icebergio.EnsureTable(ctx, cat, tables.Bronze)
	if err != nil || again.Schema().ID != tbl.Schema().ID {
		t.Fatalf("a second open: schema %d, err %v; want %d, no change", again.Schema().ID, err, tbl.Schema().ID)
	}

	logAppend := "LogAppendTime"
	row := tables.BronzeEvent{Source: &news, Timestamp: 3, IngestedAt: 4, KafkaTopic: "t", KafkaOffset: 1, KafkaTimestamp: us(6000),
		KafkaKey: []byte("debtor-17"), KafkaHeaders: []offsets.Header{{Key: "trace", Value: []byte("a1")}, {Key: "trace", Value: nil}, {Key: "empty", Value: []byte{}}},
		KafkaTimestampType: &logAppend}
	icebergtest.Append(t, tbl, []tables.BronzeEvent{row}, nil)

	var got []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, cfg, tables.Bronze.Ident, &got); err != nil {
		t.Fatal(err)
	}
	want := []tables.BronzeEvent{{Source: &news, Timestamp: 1, IngestedAt: 2, KafkaTopic: "t", KafkaOffset: 0, KafkaTimestamp: us(-5000)}, row}
	if len(got) == 2 && got[0].KafkaOffset == 1 {
		got[0], got[1] = got[1], got[0]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}
