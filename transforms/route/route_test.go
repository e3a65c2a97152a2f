package route

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/tables"
)

func str(s string) *string { return &s }

func TestParseTables(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"kafka_topic=a:ns.a", []string{"ns.a"}},
		{"kafka_topic=a:ns.a, kafka_topic=b:ns.b, *:ns.a", []string{"ns.a", "ns.b"}},
		{"type=x|y:ns.t_{type}", []string{"ns.t_x", "ns.t_y"}},
		{"kafka_topic=a|b&type=x|y:ns.{kafka_topic}_{type}", []string{"ns.a_x", "ns.a_y", "ns.b_x", "ns.b_y"}},
		{"type=x:ns.t_x,type=x|z:ns.t_{type}", []string{"ns.t_x", "ns.t_z"}},
	} {
		r, err := Parse(tc.spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.spec, err)
		}
		if diff := cmp.Diff(tc.want, r.Tables()); diff != "" {
			t.Errorf("Parse(%q).Tables() (-want +got):\n%s", tc.spec, diff)
		}
		if r.String() != tc.spec {
			t.Errorf("String() = %q, want %q", r.String(), tc.spec)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "empty"},
		{"ns.a", "want CONDITIONS:TABLE"},
		{"type=x:", "want CONDITIONS:TABLE"},
		{"type:ns.a", "want FIELD=VALUE"},
		{"=x:ns.a", "want FIELD=VALUE"},
		{"type=x||y:ns.a", "an empty value"},
		{"type=x&type=y:ns.a", "type twice"},
		{"type=x:ns.t_{kind}", "{kind}"},
		{"*:ns.t_{type}", "{type}"},
		{"type=x:ns.t_{type", "a { without }"},
	} {
		_, err := Parse(tc.spec)
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %v containing %q", tc.spec, err, ErrSpec, tc.want)
		}
	}
}

func TestRoute(t *testing.T) {
	r, err := Parse("kafka_topic=debt&type=rating|outlook:ns.debt_{type}, kafka_topic=debt:ns.debt, source=news:ns.news, rank=1|true|null:ns.odd")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Table  string
		Reason string
	}
	ev := func(topic string, source *string, extra string) *tables.BronzeEvent {
		e := &tables.BronzeEvent{KafkaTopic: topic, Source: source}
		if extra != "" {
			e.Extra = &extra
		}
		return e
	}
	for _, tc := range []struct {
		name string
		ev   *tables.BronzeEvent
		want result
	}{
		{"template", ev("debt", nil, `{"type":"rating"}`), result{Table: "ns.debt_rating"}},
		{"template, second value", ev("debt", nil, `{"type":"outlook","x":[1]}`), result{Table: "ns.debt_outlook"}},
		{"first rule fails on a value, second matches", ev("debt", nil, `{"type":"other"}`), result{Table: "ns.debt"}},
		{"member missing", ev("debt", nil, ""), result{Table: "ns.debt"}},
		{"a number is its JSON text", ev("x", nil, `{"rank":1}`), result{Table: "ns.odd"}},
		{"a boolean", ev("x", nil, `{"rank":true}`), result{Table: "ns.odd"}},
		{"null", ev("x", nil, `{"rank":null}`), result{Table: "ns.odd"}},
		{"a string is its text, not its JSON", ev("x", nil, `{"rank":"1"}`), result{Table: "ns.odd"}},
		{"a column", ev("x", str("news"), ""), result{Table: "ns.news"}},
		{"no rule", ev("x", str("blog"), `{"type":"rating","rank":2}`),
			result{Reason: `unrouted: no --route rule matches kafka_topic="x", type="rating", source="blog", rank="2"`}},
		{"no rule, members missing", ev("x", nil, ""),
			result{Reason: `unrouted: no --route rule matches kafka_topic="x", type missing, source missing, rank missing`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i, reason, ok := r.Route(tc.ev)
			var got result
			if ok {
				got.Table = r.Tables()[i]
			} else {
				got.Reason = reason
			}
			if ok != (reason == "") {
				t.Errorf("Route: ok %v with reason %q", ok, reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Route (-want +got):\n%s", diff)
			}
		})
	}
}

// Every value a rule lists routes to a table of Tables: Route's index is
// always in range.
func TestRouteIndexInTables(t *testing.T) {
	r, err := Parse("a=1|2&b=3|4:ns.t_{a}_{b}, c=5:ns.t_1_3")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{`{"a":"1","b":"3"}`, `{"a":"2","b":"4"}`, `{"a":"1","b":"4"}`, `{"c":"5"}`} {
		i, _, ok := r.Route(&tables.BronzeEvent{Extra: &extra})
		if !ok || i < 0 || i >= len(r.Tables()) {
			t.Fatalf("Route(%s) = %d, %v; tables %v", extra, i, ok, r.Tables())
		}
	}
	if got, want := len(r.Tables()), 4; got != want {
		t.Errorf("%d tables %v, want %d", got, r.Tables(), want)
	}
}

func TestTopicTables(t *testing.T) {
	r, err := Parse("kafka_topic=debt&type=rating|outlook:ns.debt_{type}, kafka_topic=debt:ns.debt, kafka_topic=a|b:ns.{kafka_topic}, source=news:ns.news, *:ns.other")
	if err != nil {
		t.Fatal(err)
	}
	names := func(idx []int) []string {
		all := r.Tables()
		var out []string
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	for _, tc := range []struct {
		topic string
		want  []string
	}{
		// kafka_topic=debt takes every debt event the first rule leaves.
		{"debt", []string{"ns.debt_rating", "ns.debt_outlook", "ns.debt"}},
		// {kafka_topic} expands to the topic's own table only.
		{"a", []string{"ns.a"}},
		{"b", []string{"ns.b"}},
		// Rules on a member leave the rest to later rules, up to "*".
		{"c", []string{"ns.news", "ns.other"}},
	} {
		got := names(r.TopicTables(tc.topic))
		if diff := cmp.Diff(slices.Sorted(slices.Values(tc.want)), slices.Sorted(slices.Values(got))); diff != "" {
			t.Errorf("TopicTables(%q) (-want +got):\n%s", tc.topic, diff)
		}
	}
	// Without "*", an event of a topic no rule decides can also be unrouted:
	// the tables are those of the rules that may take it.
	r2, err := Parse("type=x:ns.x, kafka_topic=d:ns.d")
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.TopicTables("e"); !cmp.Equal(got, []int{0}) {
		t.Errorf("TopicTables(e) = %v, want [0] (ns.x)", got)
	}
	if got := r2.TopicTables("d"); !cmp.Equal(got, []int{0, 1}) {
		t.Errorf("TopicTables(d) = %v, want [0 1]", got)
	}
}
