// Package route sends each bronze event to one of several tables, chosen by
// its topic or by a member of the event, as --route describes it.
//
// A route specification is a comma-separated list of rules, tried in order;
// the first rule whose conditions all hold chooses the table:
//
//	kafka_topic=fintech.debt.raw:lakehouse.debt_events
//	kafka_topic=fintech.ratings.raw&type=rating|outlook:lakehouse.ratings_{type}
//	*:lakehouse.other_events
//
// A condition is FIELD=VALUE, or FIELD=V1|V2|... for any of several values.
// FIELD is a column of the bronze row (kafka_topic, source, title) or a
// top-level member of the event, which bronze keeps in its extra column
// (type above). A member that is a string matches its text; any other JSON
// value matches its JSON text (true, 3, null). A missing member matches
// nothing. The rule "*" has no condition and matches every event.
//
// The table may name a field of the rule's conditions in braces: the rule
// stands for one table per value, so "type=rating|outlook:lakehouse.ratings_{type}"
// routes to lakehouse.ratings_rating and lakehouse.ratings_outlook. Every
// table a specification can route to is known from it alone ([Rules.Tables]):
// the pipeline creates and checks them all at start, and reads its offsets
// from each before it reads Kafka. A value no rule names is therefore never a
// new table: an event that no rule matches is a dead letter with the reason
// [Unrouted], never dropped.
//
// The package imports the table layer and the standard library only.
package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/haade/haade/transforms/tables"
)

// Unrouted is the reason, at the start of a dead letter's error column, of
// an event that no rule of the specification matches.
const Unrouted = "unrouted"

// ErrSpec is wrapped by every error of Parse.
var ErrSpec = errors.New("bad route")

// Rules is a parsed route specification. The zero value routes nothing.
type Rules struct {
	rules  []rule
	tables []string
	index  map[string]int // tables' indices
	spec   string
}

type rule struct {
	conds    []cond
	template string
	// fixed is the table when the template names no field, and the
	// template's index among the tables then.
	fixed int
}

type cond struct {
	field  string
	values []string
}

// Parse parses a route specification (see the package documentation). An
// empty specification is an error: a pipeline without routes does not
// parse one.
func Parse(spec string) (*Rules, error) {
	r := &Rules{spec: spec, index: map[string]int{}}
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%w: empty", ErrSpec)
	}
	index := r.index
	for _, text := range strings.Split(spec, ",") {
		text = strings.TrimSpace(text)
		head, table, ok := strings.Cut(text, ":")
		if !ok || strings.TrimSpace(table) == "" {
			return nil, fmt.Errorf("%w %q: want CONDITIONS:TABLE", ErrSpec, text)
		}
		ru := rule{template: strings.TrimSpace(table), fixed: -1}
		if strings.TrimSpace(head) != "*" {
			for _, c := range strings.Split(head, "&") {
				field, vals, ok := strings.Cut(c, "=")
				field = strings.TrimSpace(field)
				if !ok || field == "" || vals == "" {
					return nil, fmt.Errorf("%w %q: condition %q: want FIELD=VALUE or FIELD=V1|V2", ErrSpec, text, c)
				}
				co := cond{field: field}
				for _, v := range strings.Split(vals, "|") {
					if v == "" {
						return nil, fmt.Errorf("%w %q: condition %q: an empty value", ErrSpec, text, c)
					}
					co.values = append(co.values, v)
				}
				if slices.ContainsFunc(ru.conds, func(o cond) bool { return o.field == field }) {
					return nil, fmt.Errorf("%w %q: %s twice", ErrSpec, text, field)
				}
				ru.conds = append(ru.conds, co)
			}
		}
		names, err := expand(ru)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSpec, text, err)
		}
		for _, n := range names {
			if _, ok := index[n]; !ok {
				index[n] = len(r.tables)
				r.tables = append(r.tables, n)
			}
		}
		if !strings.Contains(ru.template, "{") {
			ru.fixed = index[ru.template]
		}
		r.rules = append(r.rules, ru)
	}
	return r, nil
}

// expand returns every table a rule can route to: its template with each
// field it names in braces replaced by each of that field's values.
func expand(ru rule) ([]string, error) {
	out := []string{ru.template}
	rest := ru.template
	for {
		i := strings.Index(rest, "{")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "}")
		if j < 0 {
			return nil, fmt.Errorf("table %s: a { without }", ru.template)
		}
		field := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		k := slices.IndexFunc(ru.conds, func(c cond) bool { return c.field == field })
		if k < 0 {
			return nil, fmt.Errorf("table %s names {%s}, which no condition of the rule lists values of: every table is created at start, so its values must be listed", ru.template, field)
		}
		var next []string
		for _, t := range out {
			for _, v := range ru.conds[k].values {
				next = append(next, strings.ReplaceAll(t, "{"+field+"}", v))
			}
		}
		out = next
	}
	return slices.Compact(out), nil
}

// String returns the specification Parse was given.
func (r *Rules) String() string { return r.spec }

// Tables returns every table the rules can route to, in the order the rules
// first name them: [Rules.Route]'s indices.
func (r *Rules) Tables() []string { return slices.Clone(r.tables) }

// Len returns how many tables the rules can route to, without copying
// them as Tables does.
func (r *Rules) Len() int { return len(r.tables) }

// TopicTables returns the indices, in Tables and in ascending order, of
// every table an event of topic can be routed to: the tables of the rules
// whose kafka_topic condition, if any, lists topic, up to and including the
// first such rule that has no other condition (it takes every event of
// topic that reaches it). An upsert pipeline deletes a key from every one
// of them but the table its latest event goes to.
func (r *Rules) TopicTables(topic string) []int {
	var out []int
	for _, ru := range r.rules {
		decided := true // the rule takes every event of topic that reaches it
		sub := ru
		sub.conds = nil
		skip := false
		for _, c := range ru.conds {
			if c.field == "kafka_topic" {
				if !slices.Contains(c.values, topic) {
					skip = true
					break
				}
				c.values = []string{topic}
			} else {
				decided = false
			}
			sub.conds = append(sub.conds, c)
		}
		if skip {
			continue
		}
		names, _ := expand(sub) // Parse expanded the whole rule
		for _, n := range names {
			out = append(out, r.index[n])
		}
		if decided {
			break
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Route returns the index, in Tables, of the table of the first rule that
// ev matches, and true; or, when none does, the reason of its dead letter
// ("unrouted: ...", naming the fields the rules look at) and false.
func (r *Rules) Route(ev *tables.BronzeEvent) (int, string, bool) {
	var extra map[string]json.RawMessage
	extraRead := false
	get := func(field string) (string, bool) {
		switch field {
		case "kafka_topic":
			return ev.KafkaTopic, true
		case "source":
			if ev.Source == nil {
				return "", false
			}
			return *ev.Source, true
		case "title":
			if ev.Title == nil {
				return "", false
			}
			return *ev.Title, true
		}
		if !extraRead {
			extraRead = true
			if ev.Extra != nil {
				_ = json.Unmarshal([]byte(*ev.Extra), &extra) // the parser made it: an object
			}
		}
		raw, ok := extra[field]
		if !ok {
			return "", false
		}
		var s string
		if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return string(raw), true
	}
next:
	for _, ru := range r.rules {
		for _, c := range ru.conds {
			v, ok := get(c.field)
			if !ok || !slices.Contains(c.values, v) {
				continue next
			}
		}
		if ru.fixed >= 0 {
			return ru.fixed, "", true
		}
		name := ru.template
		for _, c := range ru.conds {
			v, _ := get(c.field)
			name = strings.ReplaceAll(name, "{"+c.field+"}", v)
		}
		return r.index[name], "", true
	}
	var seen []string
	var desc []string
	for _, ru := range r.rules {
		for _, c := range ru.conds {
			if slices.Contains(seen, c.field) {
				continue
			}
			seen = append(seen, c.field)
			if v, ok := get(c.field); ok {
				desc = append(desc, fmt.Sprintf("%s=%q", c.field, v))
			} else {
				desc = append(desc, c.field+" missing")
			}
		}
	}
	return -1, fmt.Sprintf("%s: no --route rule matches %s", Unrouted, strings.Join(desc, ", ")), false
}
