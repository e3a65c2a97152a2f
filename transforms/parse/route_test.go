package parse_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/route"
)

func init() {
	register.Function2x0(describeEventBatch)
	register.Function2x0(describeDeadLetterBatch)
	register.Function2x0(describeKeyed)
}

// describeKeyed emits "route [start,end) key@offset... - key@offset..." of
// a keyed batch: its rows, then its deletes.
func describeKeyed(b parse.EventBatch, emit func(string)) {
	var rows, dels []string
	for _, r := range b.Rows {
		rows = append(rows, fmt.Sprintf("%s@%d", r.KafkaKey, r.KafkaOffset))
	}
	for _, d := range b.Dels {
		dels = append(dels, fmt.Sprintf("%s@%d", d.Key, d.Offset))
	}
	emit(fmt.Sprintf("route %d [%d,%d) %s - %s", b.Route, b.Source.Start, b.Source.End, strings.Join(rows, " "), strings.Join(dels, " ")))
}

// describeEventBatch emits "route [start,end) offsets..." of a batch.
func describeEventBatch(b parse.EventBatch, emit func(string)) {
	var offs []string
	for _, r := range b.Rows {
		offs = append(offs, fmt.Sprint(r.KafkaOffset))
	}
	emit(fmt.Sprintf("route %d %s/%d [%d,%d) %s", b.Route, b.Source.Topic, b.Source.Partition, b.Source.Start, b.Source.End, strings.Join(offs, " ")))
}

// describeDeadLetterBatch emits "[start,end) offset=reason..." of a batch.
func describeDeadLetterBatch(b parse.DeadLetterBatch, emit func(string)) {
	var rows []string
	for _, r := range b.Rows {
		reason, _ := parse.SplitError(r.Error)
		rows = append(rows, fmt.Sprintf("%d=%s:%s", r.KafkaOffset, reason, r.Payload))
	}
	emit(fmt.Sprintf("%s/%d [%d,%d) %s", b.Source.Topic, b.Source.Partition, b.Source.Start, b.Source.End, strings.Join(rows, " ")))
}

func ev(source, typ string) []byte {
	return fmt.Appendf(nil, `{"source":%q,"title":"t","timestamp":"2026-05-19T10:00:00Z","type":%q}`, source, typ)
}

// With routes, every table gets one batch per Kafka batch with the batch's
// whole range and the events routed to it, in offset order; an event no
// rule matches is a dead letter with its bytes, in offset order among the
// parser's own dead letters.
func TestEventsRoutes(t *testing.T) {
	rules, err := route.Parse("type=rating|outlook:ns.debt_{type}, source=news:ns.news")
	if err != nil {
		t.Fatal(err)
	}
	b1 := offsets.Batch{Topic: "t", Partition: 0, Start: 10, End: 17, Records: []offsets.Record{
		{Offset: 10, Value: ev("x", "rating")},
		{Offset: 11, Value: ev("news", "other")},
		{Offset: 12, Value: ev("blog", "other")}, // no rule
		{Offset: 13, Value: []byte("{")},         // malformed
		{Offset: 14, Value: ev("x", "outlook")},
		{Offset: 16, Value: ev("news", "rating")}, // the first rule wins; 15 is a gap
	}}
	b2 := offsets.Batch{Topic: "t", Partition: 1, Start: 0, End: 2, Records: []offsets.Record{
		{Offset: 0, Null: true},
		{Offset: 1, Value: ev("blog", "")},
	}}
	p, s := beam.NewPipelineWithRoot()
	good, bad := parse.Events(s, beam.Create(s, b1, b2), parse.Routes(rules))
	outs := parse.Split(s, len(rules.Tables()), good)
	if got := len(outs); got != 3 {
		t.Fatalf("Split: %d PCollections, want 3 (%v)", got, rules.Tables())
	}
	passert.Equals(s, beam.ParDo(s, describeEventBatch, outs[0]), "route 0 t/0 [10,17) 10 16", "route 0 t/1 [0,2) ")
	passert.Equals(s, beam.ParDo(s, describeEventBatch, outs[1]), "route 1 t/0 [10,17) 14", "route 1 t/1 [0,2) ")
	passert.Equals(s, beam.ParDo(s, describeEventBatch, outs[2]), "route 2 t/0 [10,17) 11", "route 2 t/1 [0,2) ")
	passert.Equals(s, beam.ParDo(s, describeDeadLetterBatch, bad),
		`t/0 [10,17) 12=unrouted:`+string(ev("blog", "other"))+` 13=syntax:{`,
		`t/1 [0,2) 0=tombstone: 1=unrouted:`+string(ev("blog", "")))
	ptest.RunAndValidate(t, p)
}

// Keyed and routed, a key lives in one table at a time: an event's key is
// deleted from the other tables its topic can reach, a tombstone or an
// "op":"delete" event deletes it from all of them, and an event no rule
// matches is a dead letter that changes no table.
func TestEventsRoutesKeyed(t *testing.T) {
	rules, err := route.Parse("kafka_topic=t&type=rating|outlook:ns.debt_{type}, kafka_topic=t&source=news:ns.news, kafka_topic=u:ns.u")
	if err != nil {
		t.Fatal(err)
	}
	keyed := func(off int64, key string, v []byte) offsets.Record {
		return offsets.Record{Offset: off, Key: []byte(key), Value: v, Null: v == nil}
	}
	b1 := offsets.Batch{Topic: "t", Partition: 0, Start: 0, End: 6, Records: []offsets.Record{
		keyed(0, "a", ev("x", "rating")),
		keyed(1, "b", ev("news", "other")),
		keyed(2, "a", ev("x", "outlook")),  // a moves to ns.debt_outlook
		keyed(3, "c", ev("blog", "other")), // no rule: a dead letter, no delete
		keyed(4, "b", nil),                 // a tombstone: b leaves every table of t
		keyed(5, "d", []byte(`{"source":"x","title":"t","timestamp":"2026-05-19T10:00:00Z","type":"rating","op":"delete"}`)),
	}}
	// Topic u has one table: its rows replace their keys there, and
	// nothing is deleted from the tables of t.
	b2 := offsets.Batch{Topic: "u", Partition: 0, Start: 0, End: 2, Records: []offsets.Record{
		keyed(0, "a", ev("x", "rating")),
		keyed(1, "e", nil),
	}}
	p, s := beam.NewPipelineWithRoot()
	good, bad := parse.Events(s, beam.Create(s, b1, b2), parse.Routes(rules), parse.Keyed())
	outs := parse.Split(s, rules.Len(), good)
	passert.Equals(s, beam.ParDo(s, describeKeyed, outs[0]), // ns.debt_rating
		"route 0 [0,6) a@0 - b@1 a@2 b@4 d@5", "route 0 [0,2)  - ")
	passert.Equals(s, beam.ParDo(s, describeKeyed, outs[1]), // ns.debt_outlook
		"route 1 [0,6) a@2 - a@0 b@1 b@4 d@5", "route 1 [0,2)  - ")
	passert.Equals(s, beam.ParDo(s, describeKeyed, outs[2]), // ns.news
		"route 2 [0,6) b@1 - a@0 a@2 b@4 d@5", "route 2 [0,2)  - ")
	passert.Equals(s, beam.ParDo(s, describeKeyed, outs[3]), // ns.u
		"route 3 [0,6)  - ", "route 3 [0,2) a@0 - e@1")
	passert.Equals(s, beam.ParDo(s, describeDeadLetterBatch, bad),
		`t/0 [0,6) 3=unrouted:`+string(ev("blog", "other")), `u/0 [0,2) `)
	ptest.RunAndValidate(t, p)
}
