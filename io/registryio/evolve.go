package registryio

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"
)

// Member is a top-level member that a later schema version adds as
// optional (not in "required"), with the Iceberg type of the column it maps
// to. A member whose JSON type has no column type (an object, an array, a
// union of types) has a nil Type and says why in Note: it stays in bronze's
// extra column.
type Member struct {
	Name string
	// JSONType is the member's "type", with "null" dropped, and its
	// "format" after a slash when it has one: "string/date-time".
	JSONType string
	// Type is the Iceberg type of its column: string, long, double,
	// boolean, timestamptz or date. Nil when it has none.
	Type iceberg.Type
	Note string
}

// Promote is the member as "name:type", the form of
// `maintain evolve --promote=member:type`; "" when it has no column type.
func (m Member) Promote() string {
	if m.Type == nil {
		return ""
	}
	return m.Name + ":" + m.Type.String()
}

// NewMembers returns the optional top-level members that newer declares
// and older does not, sorted by name. Members older has, and members newer
// requires, are not returned: a required new member is not a compatible
// change for old events, and is for a human to decide.
func NewMembers(older, newer string) ([]Member, error) {
	o, err := members(older)
	if err != nil {
		return nil, fmt.Errorf("older schema: %w", err)
	}
	n, err := members(newer)
	if err != nil {
		return nil, fmt.Errorf("newer schema: %w", err)
	}
	var out []Member
	for name, p := range n.props {
		if _, ok := o.props[name]; ok || n.required[name] {
			continue
		}
		out = append(out, mapMember(name, p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// NewMembersBetween fetches two versions of subject (to = -1: the latest)
// and returns NewMembers between them.
func NewMembersBetween(ctx context.Context, r *Resolver, subject string, from, to int) ([]Member, error) {
	var texts [2]string
	for i, v := range []int{from, to} {
		err := r.retry(ctx, fmt.Sprintf("version %d of %s", v, subject), func(ctx context.Context) error {
			s, err := r.cl.SchemaByVersion(ctx, subject, v)
			texts[i] = s.Schema.Schema
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return NewMembers(texts[0], texts[1])
}

type objectSchema struct {
	props    map[string]map[string]any
	required map[string]bool
}

func members(text string) (objectSchema, error) {
	var doc struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return objectSchema{}, fmt.Errorf("%w: %v", ErrNotJSONSchema, err)
	}
	s := objectSchema{props: doc.Properties, required: map[string]bool{}}
	for _, r := range doc.Required {
		s.required[r] = true
	}
	return s, nil
}

func mapMember(name string, p map[string]any) Member {
	var types []string
	switch t := p["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
	}
	format, _ := p["format"].(string)
	m := Member{Name: name, JSONType: strings.Join(types, "|")}
	if format != "" {
		m.JSONType += "/" + format
	}
	if len(types) != 1 {
		m.Note = "no single JSON type: stays in extra"
		return m
	}
	switch types[0] {
	case "string":
		switch format {
		case "date-time":
			m.Type = iceberg.PrimitiveTypes.TimestampTz
		case "date":
			m.Type = iceberg.PrimitiveTypes.Date
		default:
			m.Type = iceberg.PrimitiveTypes.String
		}
	case "integer":
		m.Type = iceberg.PrimitiveTypes.Int64
	case "number":
		m.Type = iceberg.PrimitiveTypes.Float64
	case "boolean":
		m.Type = iceberg.PrimitiveTypes.Bool
	default:
		m.Note = types[0] + " has no column type: stays in extra"
	}
	return m
}
