//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/haade/haade/transforms/parse/event"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceKeyed sends each value with its key and the same headers, in the
// order given (kcat -H may repeat a name).
func (e *env) produceKeyed(keys []string, values [][]byte, headers ...string) {
	e.t.Helper()
	checkValues(e.t, values)
	args := []string{"-K", `\x1f`}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := e.kcatProducer(args...)
	var in [][]byte
	for i, v := range values {
		in = append(in, append([]byte(keys[i]+keyDelim), v...))
	}
	cmd.Stdin = bytes.NewReader(bytes.Join(in, []byte(delim)))
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("kcat -P -K -H: %v\n%s", err, out)
	}
}

// Keys, headers and the timestamp type are kept in both tables: a keyed
// event with headers (one name repeated) lands in bronze with them, a
// keyed malformed record and a keyed tombstone in the dead letters with
// their keys, and records without key or headers have nulls. verify checks
// every row against kcat's view of the topic (key, headers, CreateTime) as
// icebergio.ScanRows reads it, then as Spark and pyiceberg read it.
func TestKeysAndHeaders(t *testing.T) {
	e := newEnv(t, "keys", 2)
	e.produceKeyed([]string{"debtor-1", "debtor-2", "debtor-3"},
		[][]byte{validEvent(0), event.MalformedCorpus[0], validEvent(1)},
		"trace=t-1", "trace=t-2", "origin=kcat")
	e.produceTombstone("debtor-4")
	e.produce([][]byte{validEvent(2), validEvent(3), event.MalformedCorpus[1]})

	truth := e.consumeAll()
	keyed, withHeaders := 0, 0
	for _, k := range truth {
		if k.K != nil {
			keyed++
		}
		if len(k.H) == 3 {
			withHeaders++
		}
	}
	if len(truth) != 7 || keyed != 4 || withHeaders != 3 {
		t.Fatalf("Kafka holds %d records, %d keyed, %d with 3 headers; want 7, 4 and 3", len(truth), keyed, withHeaders)
	}
	e.runBounded(3 * time.Minute)
	e.verify(truth, verifyOpts{})
}

// On a topic with message.timestamp.type=LogAppendTime the broker stamps
// each record with its own time: kafka_timestamp holds the broker's time
// and kafka_timestamp_type says LogAppendTime, in both tables, as kcat -J
// reports them (its envelope's tstype), read by icebergio.ScanRows, Spark
// and pyiceberg. The producer's timestamps (an hour ago) must not land.
func TestLogAppendTime(t *testing.T) {
	e := newEnv(t, "logappend", 2)
	adm := kadm.NewClient(mustClient(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	v := "LogAppendTime"
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: &v}}, e.topic)
	if err == nil {
		_, err = rs.On(e.topic, nil)
	}
	if err != nil {
		t.Fatalf("set message.timestamp.type=LogAppendTime on %s: %v", e.topic, err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	cl := mustClient(t, kgo.DefaultProduceTopic(e.topic))
	for i, val := range [][]byte{validEvent(0), validEvent(1), event.MalformedCorpus[0], validEvent(2)} {
		r := &kgo.Record{Key: []byte(fmt.Sprint("k", i)), Value: val, Timestamp: hourAgo}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	truth := e.consumeAll()
	e.timestampTypes(truth)
	for _, k := range truth {
		if k.TsType != "LogAppendTime" || time.UnixMilli(k.TsMs).Before(hourAgo.Add(30*time.Minute)) {
			t.Fatalf("record %d/%d: Kafka says %s at %v, want the broker's LogAppendTime: the topic's config did not apply",
				k.P, k.O, k.TsType, time.UnixMilli(k.TsMs))
		}
	}
	if len(truth) != 4 {
		t.Fatalf("Kafka holds %d records, want 4", len(truth))
	}
	e.runBounded(3 * time.Minute)
	e.verify(truth, verifyOpts{})
}

// mustClient is a franz-go client of the tier's broker, closed at the end.
func mustClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
