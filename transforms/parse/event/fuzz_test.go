package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks Parse against an oracle built on encoding/json
// (see checkAgainstOracle). Run it with
//
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 60s ./transforms/parse/event/
func FuzzParse(f *testing.F) {
	for _, v := range MalformedCorpus {
		f.Add(v)
	}
	for _, v := range ValidSamples {
		f.Add(v)
	}
	for _, s := range []string{
		``,
		`{"timestamp":"2026-05-19T10:00:00Z","a":{"b":[1,{"c":"\u00e9\ud83d\udcb0"}]}}`,
		`{"timestamp":"2026-05-19T10:00:00Z","\"k\\":1,"\u0001":2}`,
		`{"timestamp":"2026-05-19T10:00:00,5Z"}`,
		`{"timestamp":"2026-05-19T10:00:00+23:59"}`,
		`{"timestamp":"0000-01-01T00:00:00+00:01"}`,
		`{"timestamp":"9999-12-31T23:59:59.9999999999-23:59"}`,
		`{"timestamp":"0001-01-01T00:00:00Z"}`,
		`{"timestamp":"9999-12-31T23:59:59.999999Z"}`,
		`{"timestamp":"2016-12-31T23:59:60.5Z"}`,
		`{"timestamp":"2026-05-19T10:00:00\u005a"}`,
		`{"source":"a","titl\u0065":"b","timestamp":"2026-05-19T10:00:00Z","x":[],"y":{}}`,
		`{"timestamp":"2026-05-19T10:00:00Z","n":-0.5e+10,"m":[true,false,null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgainstOracle(t, in)
	})
}

// expectation is what the oracle says Parse must return.
type expectation struct {
	// reason is the exact Reason wanted, or "" when any of reasons will do.
	reason  string
	reasons []string
	// loose lists reasons Parse may give instead of a stricter verdict
	// that encoding/json cannot see (it accepts lone surrogate escapes).
	loose  bool
	fields *Fields
	extra  map[string]any // the decoded Extra wanted, nil for none
}

// checkAgainstOracle parses in and checks:
//   - no panic, and either a row or an error wrapping exactly one sentinel;
//   - an accepted record is accepted by encoding/json too (json.Valid, and a
//     Decoder that finds one object and no trailing data), with the same
//     source, title and timestamp (time.Parse), and an Extra that is compact,
//     valid JSON, decodes to the other members, and has none of the kept ones;
//   - a rejected record gets the Reason that an independent oracle computes
//     from encoding/json's tokens, except where Parse is documented to be
//     stricter (invalid UTF-8, lone surrogate escapes).
func checkAgainstOracle(t *testing.T, in []byte) {
	t.Helper()
	orig := bytes.Clone(in)
	got, err := Parse(in)
	if !bytes.Equal(in, orig) {
		t.Fatalf("Parse modified its input")
	}
	checkOneSentinel(t, in, err)
	if err != nil && got != (Fields{}) {
		t.Fatalf("Parse(%q) returned both a row %+v and an error %v", in, got, err)
	}
	want := oracle(in)
	reason := Reason(err)

	if err == nil {
		// The stated property: encoding/json accepts what Parse accepts.
		if !json.Valid(in) {
			t.Fatalf("Parse accepted %q but json.Valid rejects it", in)
		}
	}
	switch {
	case want.reasons != nil:
		ok := false
		for _, r := range want.reasons {
			ok = ok || r == reason
		}
		if !ok {
			t.Fatalf("Parse(%q): reason %q (err %v), want one of %q", in, reason, err, want.reasons)
		}
		return
	case want.loose && reason == "syntax":
		return // a lone surrogate that encoding/json replaces with U+FFFD
	case reason != want.reason:
		t.Fatalf("Parse(%q): reason %q (err %v), want %q", in, reason, err, want.reason)
	}
	if err != nil {
		return
	}

	wantFields := *want.fields
	gotFields := got
	gotFields.Extra = nil
	if diff := cmp.Diff(wantFields, gotFields); diff != "" {
		t.Fatalf("Parse(%q) kept fields differ from encoding/json (-want +got):\n%s", in, diff)
	}
	if want.extra == nil {
		if got.Extra != nil {
			t.Fatalf("Parse(%q): Extra = %q, want nil", in, *got.Extra)
		}
		return
	}
	if got.Extra == nil {
		t.Fatalf("Parse(%q): Extra = nil, want %v", in, want.extra)
	}
	extra := []byte(*got.Extra)
	if !json.Valid(extra) || !utf8.Valid(extra) {
		t.Fatalf("Parse(%q): Extra %q is not valid JSON", in, extra)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, extra); err != nil || !bytes.Equal(compact.Bytes(), extra) {
		t.Fatalf("Parse(%q): Extra %q is not compact (%q)", in, extra, compact.Bytes())
	}
	members, _, err := decodeMembers(extra)
	if err != nil {
		t.Fatalf("Parse(%q): Extra %q is not a JSON object: %v", in, extra, err)
	}
	gotExtra := map[string]any{}
	for _, m := range members {
		if _, dup := gotExtra[m.key]; dup || m.nestedDup {
			t.Fatalf("Parse(%q): Extra %q repeats a member name", in, extra)
		}
		switch m.key {
		case "source", "title", "timestamp":
			t.Fatalf("Parse(%q): Extra %q has the kept member %q", in, extra, m.key)
		}
		gotExtra[m.key] = m.val
	}
	// reflect.DeepEqual first: cmp.Diff is very slow on deeply nested values.
	if reflect.DeepEqual(want.extra, gotExtra) {
		return
	}
	if diff := cmp.Diff(want.extra, gotExtra); diff != "" {
		t.Fatalf("Parse(%q): Extra %q differs from encoding/json (-want +got):\n%s", in, extra, diff)
	}
}

var allSentinels = []error{ErrEmpty, ErrSyntax, ErrNotObject, ErrTrailingData, ErrWrongType, ErrMissingTimestamp, ErrBadTimestamp, ErrDuplicateMember}

// checkOneSentinel checks that a non-nil err wraps exactly one sentinel.
func checkOneSentinel(t *testing.T, in []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	n := 0
	for _, s := range allSentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("Parse(%q) error %q wraps %d sentinels, want 1", in, err, n)
	}
	if err.Error() == "" {
		t.Fatalf("Parse(%q) returned an empty error message", in)
	}
}

const jsonSpace = " \t\r\n"

// oracle computes what Parse must return from encoding/json alone.
func oracle(in []byte) expectation {
	if len(in) == 0 {
		return expectation{reason: "empty"}
	}
	trimmed := bytes.TrimLeft(in, jsonSpace)
	if !utf8.Valid(in) {
		// Invalid UTF-8 is a syntax error when it is inside the first value,
		// trailing data when it follows a well-formed object.
		return expectation{reasons: []string{"syntax", "not_object", "trailing_data"}}
	}
	if len(trimmed) > 0 && trimmed[0] != '{' {
		if json.Valid(in) {
			return expectation{reason: "not_object", loose: bytes.Contains(bytes.ToLower(in), []byte(`\ud`))}
		}
		// Where one top-level value ends and garbage begins is not always
		// clear ("02", "1x", "nullx", `"a"x`): encoding/json's Decoder
		// reads "0" from "02" but rejects "1x". Either verdict will do.
		return expectation{reasons: []string{"syntax", "not_object"}}
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return expectation{reason: "syntax"}
	}
	loose := bytes.Contains(bytes.ToLower(raw), []byte(`\ud`))
	rest := bytes.TrimLeft(in[dec.InputOffset():], jsonSpace)
	if len(rest) > 0 {
		return expectation{reason: "trailing_data", loose: loose}
	}
	members, _, err := decodeMembers(raw)
	if err != nil {
		panic("oracle: cannot walk a valid object: " + err.Error())
	}
	e := expectation{loose: loose}
	seen := map[string]bool{}
	var ts *int64
	f := &Fields{}
	for _, m := range members {
		if seen[m.key] || m.nestedDup {
			e.reason = "duplicate_member"
			return e
		}
		seen[m.key] = true
		switch m.key {
		case "source", "title":
			var p *string
			switch v := m.val.(type) {
			case nil:
			case string:
				p = &v
			default:
				e.reason = "wrong_type"
				return e
			}
			if m.key == "source" {
				f.Source = p
			} else {
				f.Title = p
			}
		case "timestamp":
			switch v := m.val.(type) {
			case nil:
			case string:
				us, ok := oracleTimestamp(v)
				if !ok {
					e.reason = "bad_timestamp"
					return e
				}
				ts = &us
			default:
				e.reason = "wrong_type"
				return e
			}
		default:
			if e.extra == nil {
				e.extra = map[string]any{}
			}
			e.extra[m.key] = m.val
		}
	}
	if ts == nil {
		e.reason = "missing_timestamp"
		return e
	}
	f.Timestamp = *ts
	e.fields = f
	return e
}

// oracleTimestamp is the reference RFC 3339 parser: time.Parse, restricted to
// the RFC 3339 grammar (its lenient fallback accepts more), with the two
// edges of parseRFC3339: a leap second (ss = 60) is hh:mm:59.999999, and
// an instant outside the years 0001-9999 in UTC is refused.
func oracleTimestamp(s string) (int64, bool) {
	if !strictRFC3339.MatchString(s) {
		return 0, false
	}
	leap := len(s) > 19 && s[17:19] == "60"
	if leap {
		s = s[:17] + "59" + s[19:]
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	if leap {
		tm = tm.Truncate(time.Second).Add(time.Second - time.Microsecond)
	}
	if u := tm.UTC(); u.Year() < 1 || u.Year() > 9999 {
		return 0, false
	}
	return tm.UnixMicro(), true
}

// oracleMember is one member of an object as encoding/json's tokens show it.
type oracleMember struct {
	key       string
	val       any  // decoded with UseNumber; objects as map[string]any
	nestedDup bool // a name repeats in an object inside val
}

// decodeMembers lists the members of a JSON object in order, without
// merging repeated names, using encoding/json's token stream.
func decodeMembers(obj []byte) ([]oracleMember, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if tok != json.Delim('{') {
		return nil, false, errors.New("not an object")
	}
	var out []oracleMember
	anyDup := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false, err
		}
		v, dup, err := walkValue(dec)
		if err != nil {
			return nil, false, err
		}
		anyDup = anyDup || dup
		out = append(out, oracleMember{key: k.(string), val: v, nestedDup: dup})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false, errors.New("data after the object")
	}
	return out, anyDup, nil
}

// walkValue decodes the next value and reports whether any object in it
// repeats a member name.
func walkValue(dec *json.Decoder) (any, bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		dup := false
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, false, err
			}
			v, d, err := walkValue(dec)
			if err != nil {
				return nil, false, err
			}
			if _, ok := m[k.(string)]; ok {
				dup = true
			}
			dup = dup || d
			m[k.(string)] = v
		}
		_, err := dec.Token()
		return m, dup, err
	case json.Delim('['):
		a := []any{}
		dup := false
		for dec.More() {
			v, d, err := walkValue(dec)
			if err != nil {
				return nil, false, err
			}
			dup = dup || d
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, dup, err
	}
	return tok, false, nil
}
