//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startRoutedProducer produces to two topics at a steady rate, event
// types rating, outlook and other, a malformed record now and then, and
// keeps what Kafka acknowledged in acked: topic/partition/offset -> value.
func startRoutedProducer(t *testing.T, topics []string, rate int, acked map[string][]byte) *ackedProducer {
	cl := mustClient(t, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	types := []string{"rating", "outlook", "other"}
	return startAcked(cl, rate, func(n int) (*kgo.Record, func(*kgo.Record)) {
		v := fmt.Appendf(nil, `{"source":"news","title":"e%d","timestamp":"2026-05-19T10:00:00Z","type":%q}`, n, types[(n/2)%3])
		if n%97 == 0 {
			v = []byte(`{"source": "news", "title": `)
		}
		return &kgo.Record{Topic: topics[n%len(topics)], Value: v}, func(r *kgo.Record) {
			acked[fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)] = r.Value
		}
	})
}

// One streaming bronze reads two topics and routes them by topic and by a
// member of the event into three tables and the dead letters, on real
// Kafka, MinIO and PostgreSQL; it is killed with SIGKILL twice mid-stream
// and started again each time, while both topics keep growing. Then every
// record is in the table its route names, once, and the dead letters hold
// the unrouted and malformed ones with their reasons.
func TestRoutedCrashes(t *testing.T) {
	e := newEnv(t, "route", 4)
	ratings := e.topic + "-ratings"
	mustScript(t, "kafka", "create-topic", ratings, "3")
	t.Cleanup(func() {
		if !t.Failed() {
			_, _ = cmdtest.Script(repoRoot, nil, "kafka", "topics", "--delete", "--topic", ratings)
		}
	})
	spec := fmt.Sprintf("kafka_topic=%s&type=rating|outlook:%s_{type}, kafka_topic=%s:%s", ratings, e.table, e.topic, e.table)
	rules, err := route.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	routed := rules.Tables()
	e.more = append(e.more, routed...)
	want := func(k string, v []byte) string {
		var m map[string]any
		if json.Unmarshal(v, &m) != nil {
			return e.dlq
		}
		switch {
		case len(k) > len(ratings) && k[:len(ratings)+1] == ratings+"/":
			if m["type"] == "rating" || m["type"] == "outlook" {
				return e.table + "_" + m["type"].(string)
			}
			return e.dlq
		default:
			return e.table
		}
	}
	args := []string{"--topic=" + e.topic + "," + ratings, "--route=" + spec}
	acked := map[string][]byte{}
	rp := startRoutedProducer(t, []string{e.topic, ratings}, 1000, acked)
	p := e.startBronze(args...)
	for i := range 2 {
		// Kill once the run has committed and is in the middle of its
		// next windows.
		e.waitCommits(p, 0, 2*time.Minute)
		time.Sleep(rand.N(3 * time.Second))
		p.kill9()
		t.Logf("kill -9 #%d (that run made %d commits)", i+1, countLines(p.log, `msg=committed`))
		p = e.startBronze(args...)
	}
	e.waitCommits(p, 0, 2*time.Minute)
	rp.finish(t)
	all := append(slices.Clone(routed), e.dlq)
	held := func() (map[string][]string, int) {
		got := map[string][]string{}
		n := 0
		for _, ident := range all {
			var keys []string
			if ident == e.dlq {
				var rows []tables.DeadLetter
				if err := icebergio.ScanRows(t.Context(), e.catalog(), ident, &rows); err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					keys = append(keys, fmt.Sprintf("%s/%d/%d", r.KafkaTopic, r.KafkaPartition, r.KafkaOffset))
					k := keys[len(keys)-1]
					reason, _ := parse.SplitError(r.Error)
					if v := acked[k]; v != nil && json.Valid(v) && reason != route.Unrouted {
						t.Errorf("dead letter %s: reason %q, want %q", k, r.Error, route.Unrouted)
					}
				}
			} else {
				var rows []tables.BronzeEvent
				if err := icebergio.ScanRows(t.Context(), e.catalog(), ident, &rows); err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					keys = append(keys, fmt.Sprintf("%s/%d/%d", r.KafkaTopic, r.KafkaPartition, r.KafkaOffset))
				}
			}
			for _, k := range keys {
				got[k] = append(got[k], ident)
			}
			n += len(keys)
		}
		return got, n
	}
	wait.For(t, 4*time.Minute, func() error {
		if _, n := held(); n < len(acked) {
			return fmt.Errorf("the tables hold %d rows of %d records", n, len(acked))
		}
		return nil
	})
	e.terminate(p, 2*time.Minute)
	e.runBounded(2*time.Minute, args...)
	got, n := held()
	var wrong []string
	for k, v := range acked {
		if w := want(k, v); len(got[k]) != 1 || got[k][0] != w {
			wrong = append(wrong, fmt.Sprintf("%s in %v, want [%s]", k, got[k], w))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 || n != len(acked) {
		t.Fatalf("%d rows for %d records; %d records not once in their table, first %v", n, len(acked), len(wrong), wrong[:min(5, len(wrong))])
	}
	per := map[string]int{}
	for _, in := range got {
		per[in[0]]++
	}
	t.Logf("%d records of two topics, exactly once: %v", len(acked), per)
	for _, ident := range all {
		if per[ident] == 0 {
			t.Errorf("%s holds no row: the test routes nothing there", ident)
		}
	}
}
