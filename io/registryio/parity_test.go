package registryio_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
)

// TestSameRowOnBothPaths: bronze's plain parse (parse.ParseBatch, behind
// parse.Events) and the registry path (registryio.ParseBatch, behind
// registryio.Events) make the same rows and dead letters from the same
// records, Kafka timestamps before 1970 included: only -1 means none.
func TestSameRowOnBothPaths(t *testing.T) {
	res, err := registryio.NewResolver(registryio.Config{URL: fakeRegistry(t).URL(), Subject: "fintech.debt.raw-value"})
	if err != nil {
		t.Fatal(err)
	}
	b := offsets.Batch{Topic: "fintech.debt.raw", Partition: 2, Start: 10}
	for i, r := range []offsets.Record{
		{Timestamp: 1_700_000_000_000, Value: []byte(sampleEvent)},
		{Timestamp: 0, Value: []byte(sampleEvent)},                                                     // the epoch
		{Timestamp: -1, Value: []byte(sampleEvent)},                                                    // Kafka's "no timestamp"
		{Timestamp: -2, Value: []byte(sampleEvent)},                                                    // 1969, two milliseconds before the epoch
		{Timestamp: -86_400_000 * 365, Value: []byte(`{"timestamp": "1969-01-01T00:00:00Z", "x": 1}`)}, // 1969
		{Timestamp: -3, Value: []byte(`{"source": 7}`)},                                                // a dead letter from before 1970
		{Timestamp: -4, Null: true, Key: []byte("k")},                                                  // a tombstone
		{Timestamp: -1, Value: []byte{}},                                                               // empty
	} {
		r.Offset = b.Start + int64(i)
		b.Records = append(b.Records, r)
	}
	b.End = b.Start + int64(len(b.Records))

	plainRows, plainDead := parse.ParseBatch(b)
	regRows, regDead, err := registryio.ParseBatch(context.Background(), b, res, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(plainRows.Rows, regRows.Rows); d != "" {
		t.Errorf("rows, parse.ParseBatch (-) against registryio.ParseBatch (+):\n%s", d)
	}
	if d := cmp.Diff(plainDead.Rows, regDead.Rows); d != "" {
		t.Errorf("dead letters, parse.ParseBatch (-) against registryio.ParseBatch (+):\n%s", d)
	}

	us := func(ms int64) *int64 { v := ms * 1000; return &v }
	wantTimes := map[int64]*int64{10: us(1_700_000_000_000), 11: us(0), 12: nil, 13: us(-2), 14: us(-86_400_000 * 365), 15: us(-3), 16: us(-4), 17: nil}
	got := map[int64]*int64{}
	for _, r := range regRows.Rows {
		got[r.KafkaOffset] = r.KafkaTimestamp
	}
	for _, d := range regDead.Rows {
		got[d.KafkaOffset] = d.KafkaTimestamp
	}
	if d := cmp.Diff(wantTimes, got); d != "" {
		t.Errorf("kafka_timestamp by offset (-want +got):\n%s", d)
	}
}
