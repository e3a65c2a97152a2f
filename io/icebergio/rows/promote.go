package rows

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// PromotedProperty is the table property that lists the promoted columns:
// a JSON object from Iceberg field id to the member of the source event
// that fills it, e.g. {"10":"region"}. Field ids, not names: a rename keeps
// the column filled from the same member. Evolve writes it in the same
// transaction as the schema change.
const PromotedProperty = "haade.promoted"

// PromotedCol is one promoted column of a table's current schema.
type PromotedCol struct {
	ID     int
	Name   string // the column's current name
	Member string
	Type   iceberg.Type
}

// DecodePromoted reads PromotedProperty. An empty value is no promotion.
func DecodePromoted(v string) (map[int]string, error) {
	out := map[int]string{}
	if v == "" {
		return out, nil
	}
	var raw map[string]string
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("%w: table property %s: %v", ErrRowType, PromotedProperty, err)
	}
	for k, m := range raw {
		id, err := strconv.Atoi(k)
		if err != nil || m == "" {
			return nil, fmt.Errorf("%w: table property %s: bad entry %q: %q", ErrRowType, PromotedProperty, k, m)
		}
		out[id] = m
	}
	return out, nil
}

// EncodePromoted writes m as the value of PromotedProperty.
func EncodePromoted(m map[int]string) string {
	raw := make(map[string]string, len(m))
	for id, member := range m {
		raw[strconv.Itoa(id)] = member
	}
	b, _ := json.Marshal(raw)
	return string(b)
}

// PromotedColumns returns the promoted columns of tbl's current schema, in
// schema order. Entries whose field no longer exists are ignored.
func PromotedColumns(tbl *table.Table) ([]PromotedCol, error) {
	m, err := DecodePromoted(tbl.Properties()[PromotedProperty])
	if err != nil || len(m) == 0 {
		return nil, err
	}
	var out []PromotedCol
	for _, f := range tbl.Schema().Fields() {
		if member, ok := m[f.ID]; ok {
			out = append(out, PromotedCol{ID: f.ID, Name: f.Name, Member: member, Type: f.Type})
		}
	}
	return out, nil
}

// PromotedMembers returns, for table tbl, its promoted columns' current
// names mapped to the members that fill them.
func PromotedMembers(tbl *table.Table) (map[string]string, error) {
	cols, err := PromotedColumns(tbl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cols))
	for _, c := range cols {
		out[c.Name] = c.Member
	}
	return out, nil
}

// SamePromoted reports whether a and b are the same promoted columns, in
// the same order.
func SamePromoted(a, b []PromotedCol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Member != b[i].Member || a[i].Name != b[i].Name || !a[i].Type.Equals(b[i].Type) {
			return false
		}
	}
	return true
}

// cell is one value of a promoted column.
type cell struct {
	set bool // false: null
	s   string
	i   int64
	f   float64
	b   bool
}

// splitOverflow takes the members of the promoted columns out of obj, the
// JSON object text of a row's overflow column (valid JSON, as the parser
// writes it), into vals (one per column). A member whose value does not fit
// its column stays in the rest, and its column's index is in bad. rest is
// the object without the members taken, nil when none is left.
func splitOverflow(obj string, cols []PromotedCol, vals []cell, bad []int) (rest *string, badOut []int) {
	for i := range vals {
		vals[i] = cell{}
	}
	members, ok := objectMembers(obj)
	if !ok {
		return &obj, bad // not an object we can read: keep it whole
	}
	var keep []int
	taken := false
	for mi, m := range members {
		ci := -1
		for j := range cols {
			if cols[j].Member == m.key {
				ci = j
				break
			}
		}
		if ci < 0 || vals[ci].set {
			keep = append(keep, mi)
			continue
		}
		v, fits := convert(cols[ci].Type, obj[m.vs:m.ve])
		if !fits {
			keep = append(keep, mi)
			bad = append(bad, ci)
			continue
		}
		vals[ci] = v
		taken = true
	}
	if !taken {
		return &obj, bad
	}
	if len(keep) == 0 {
		return nil, bad
	}
	var sb strings.Builder
	sb.WriteByte('{')
	for k, mi := range keep {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(obj[members[mi].ks:members[mi].ve])
	}
	sb.WriteByte('}')
	s := sb.String()
	return &s, bad
}

// convert reads one JSON value as a value of column type t. JSON null is a
// null of any type.
func convert(t iceberg.Type, v string) (cell, bool) {
	if v == "null" {
		return cell{}, true
	}
	switch t.(type) {
	case iceberg.StringType:
		s, ok := jsonString(v)
		return cell{set: true, s: s}, ok
	case iceberg.Int32Type, iceberg.Int64Type:
		if strings.ContainsAny(v, ".eE\"") || v == "" {
			return cell{}, false
		}
		bits := 64
		if _, ok := t.(iceberg.Int32Type); ok {
			bits = 32
		}
		n, err := strconv.ParseInt(v, 10, bits)
		return cell{set: true, i: n}, err == nil
	case iceberg.Float32Type, iceberg.Float64Type:
		if v == "" || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
			return cell{}, false
		}
		bits := 64
		if _, ok := t.(iceberg.Float32Type); ok {
			bits = 32
		}
		f, err := strconv.ParseFloat(v, bits)
		return cell{set: true, f: f}, err == nil
	case iceberg.BooleanType:
		switch v {
		case "true":
			return cell{set: true, b: true}, true
		case "false":
			return cell{set: true}, true
		}
		return cell{}, false
	case iceberg.TimestampTzType, iceberg.TimestampType:
		s, ok := jsonString(v)
		if !ok {
			return cell{}, false
		}
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || ts.Nanosecond()%1000 != 0 {
			// Sub-microsecond digits would be cut: keep the text.
			return cell{}, false
		}
		return cell{set: true, i: ts.UnixMicro()}, true
	}
	return cell{}, false
}

func jsonString(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if !strings.ContainsRune(v, '\\') {
		return v[1 : len(v)-1], true
	}
	var s string
	err := json.Unmarshal([]byte(v), &s)
	return s, err == nil
}

// appendCellTo appends v to fb, a builder of the Arrow type of a promoted
// column.
func appendCellTo(fb array.Builder, v cell) {
	if !v.set {
		fb.AppendNull()
		return
	}
	switch b := fb.(type) {
	case *array.StringBuilder:
		b.Append(v.s)
	case *array.LargeStringBuilder:
		b.Append(v.s)
	case *array.Int32Builder:
		b.Append(int32(v.i))
	case *array.Int64Builder:
		b.Append(v.i)
	case *array.Float32Builder:
		b.Append(float32(v.f))
	case *array.Float64Builder:
		b.Append(v.f)
	case *array.BooleanBuilder:
		b.Append(v.b)
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.i))
	default:
		fb.AppendNull()
	}
}

// member is one member of a JSON object text: the key (decoded) and where
// the member's raw key starts and its value starts and ends.
type member struct {
	key        string
	ks, vs, ve int
}

// objectMembers lists the members of obj, a valid JSON object text. ok is
// false when obj is not one.
func objectMembers(obj string) ([]member, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	i = skipSpace(obj, i+1)
	var out []member
	if i < len(obj) && obj[i] == '}' {
		return out, true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return nil, false
		}
		ks := i
		ke := skipString(obj, i)
		if ke < 0 {
			return nil, false
		}
		key, ok := jsonString(obj[ks:ke])
		if !ok {
			return nil, false
		}
		i = skipSpace(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		vs := skipSpace(obj, i+1)
		ve := skipValue(obj, vs)
		if ve < 0 {
			return nil, false
		}
		out = append(out, member{key: key, ks: ks, vs: vs, ve: ve})
		i = skipSpace(obj, ve)
		if i >= len(obj) {
			return nil, false
		}
		if obj[i] == '}' {
			return out, true
		}
		if obj[i] != ',' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
	}
	return nil, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at s[i] ('"').
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value that starts at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				if j = skipString(s, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// foldIntoObject adds members (name -> raw JSON value) to obj, the JSON
// object text of an overflow column (nil for none), in name order.
func foldIntoObject(obj *string, add map[string]string) *string {
	if len(add) == 0 {
		return obj
	}
	names := make([]string, 0, len(add))
	for k := range add {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	if obj != nil && len(*obj) > 2 {
		s := strings.TrimRight(*obj, " \t\r\n")
		sb.WriteString(s[:len(s)-1])
		sb.WriteByte(',')
	} else {
		sb.WriteByte('{')
	}
	for k, n := range names {
		if k > 0 {
			sb.WriteByte(',')
		}
		key, _ := json.Marshal(n)
		sb.Write(key)
		sb.WriteByte(':')
		sb.WriteString(add[n])
	}
	sb.WriteByte('}')
	s := sb.String()
	return &s
}

// jsonCell renders the value at row i of a column as JSON, for folding a
// column a row type lacks back into its overflow. ok is false for null.
func jsonCell(col arrow.Array, i int) (string, bool) {
	if col.IsNull(i) {
		return "", false
	}
	switch a := col.(type) {
	case *array.String:
		b, _ := json.Marshal(a.Value(i))
		return string(b), true
	case *array.LargeString:
		b, _ := json.Marshal(a.Value(i))
		return string(b), true
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), true
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32), true
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64), true
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), true
	case *array.Timestamp:
		v := int64(a.Value(i))
		if a.DataType().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			v /= 1000
		}
		b, _ := json.Marshal(time.UnixMicro(v).UTC().Format(time.RFC3339Nano))
		return string(b), true
	}
	return "", false
}
