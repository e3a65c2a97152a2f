package event

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const sampleEvent = `{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`

func strp(s string) *string { return &s }

func rfcMicros(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

// parseResult is what one Parse call gives, in a form cmp can diff.
type parseResult struct {
	Fields Fields
	Reason string
}

func TestParse(t *testing.T) {
	ts := rfcMicros("2026-05-19T10:00:00Z")
	tests := []struct {
		name string
		in   string
		want parseResult
		// msg, when set, must appear in the error text.
		msg string
	}{
		// Happy paths.
		{name: "sample", in: sampleEvent, want: parseResult{Fields: Fields{Source: strp("news"), Title: strp("Debt market update"), Timestamp: ts}}},
		{name: "compact", in: `{"source":"news","title":"t","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Fields: Fields{Source: strp("news"), Title: strp("t"), Timestamp: ts}}},
		{name: "only timestamp", in: `{"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Fields: Fields{Timestamp: ts}}},
		{name: "null source and title", in: `{"source":null,"title":null,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Fields: Fields{Timestamp: ts}}},
		{name: "empty strings are not null", in: `{"source":"","title":"","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Fields: Fields{Source: strp(""), Title: strp(""), Timestamp: ts}}},
		{name: "surrounding whitespace", in: " \t\r\n" + sampleEvent + "\n\n", want: parseResult{Fields: Fields{Source: strp("news"), Title: strp("Debt market update"), Timestamp: ts}}},
		{name: "member order does not matter", in: `{"timestamp":"2026-05-19T10:00:00Z","title":"t","source":"s"}`, want: parseResult{Fields: Fields{Source: strp("s"), Title: strp("t"), Timestamp: ts}}},
		{name: "offset converted to UTC", in: `{"timestamp":"2026-05-19T12:30:00+02:30"}`, want: parseResult{Fields: Fields{Timestamp: ts}}},
		{name: "negative offset", in: `{"timestamp":"2026-05-19T04:00:00-06:00"}`, want: parseResult{Fields: Fields{Timestamp: ts}}},
		{name: "fraction truncated to microseconds", in: `{"timestamp":"2026-05-19T10:00:00.1234569999Z"}`, want: parseResult{Fields: Fields{Timestamp: ts + 123456}}},
		{name: "before the epoch", in: `{"timestamp":"1969-12-31T23:59:59.5Z"}`, want: parseResult{Fields: Fields{Timestamp: -500_000}}},
		{name: "escapes decoded", in: `{"source":"a\"b\\c\/d\b\f\n\r\t","title":"\u00e9\u20ac\ud83d\udcb0","timestamp":"2026-05-19T10:00:00Z"}`,
			want: parseResult{Fields: Fields{Source: strp("a\"b\\c/d\b\f\n\r\t"), Title: strp("é€💰"), Timestamp: ts}}},
		{name: "raw UTF-8 kept", in: `{"title":"Dette publique: l'État émet 💶","timestamp":"2026-05-19T10:00:00Z"}`,
			want: parseResult{Fields: Fields{Title: strp("Dette publique: l'État émet 💶"), Timestamp: ts}}},
		{name: "escaped member names are the kept members", in: `{"\u0073ource":"s","titl\u0065":"t","\u0074imestamp":"2026-05-19T10:00:00\u005A"}`,
			want: parseResult{Fields: Fields{Source: strp("s"), Title: strp("t"), Timestamp: ts}}},
		{name: "member names are case sensitive", in: `{"Source":"s","TITLE":"t","timestamp":"2026-05-19T10:00:00Z"}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"Source":"s","TITLE":"t"}`)}}},
		{name: "extras compacted", in: `{ "timestamp" : "2026-05-19T10:00:00Z" , "amount" : 1.5e3 , "tags" : [ "a" , "b c" ] , "meta" : { "k" : { } , "e" : [ ] , "n" : null } }`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"amount":1.5e3,"tags":["a","b c"],"meta":{"k":{},"e":[],"n":null}}`)}}},
		{name: "extra values keep their escapes", in: `{"timestamp":"2026-05-19T10:00:00Z","q":"say \"hi\" \u00e9 { , }"}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"q":"say \"hi\" \u00e9 { , }"}`)}}},
		{name: "extra names re-encoded", in: `{"timestamp":"2026-05-19T10:00:00Z","\u0061":1,"\"q\"":2,"b\\s":3,"\u0001\n":4,"\/\u00e9":5}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"a":1,"\"q\"":2,"b\\s":3,"\u0001\n":4,"/é":5}`)}}},
		{name: "null extra kept", in: `{"timestamp":"2026-05-19T10:00:00Z","x":null}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"x":null}`)}}},
		{name: "nested source is extra", in: `{"timestamp":"2026-05-19T10:00:00Z","meta":{"source":7,"timestamp":null}}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"meta":{"source":7,"timestamp":null}}`)}}},
		{name: "same name in sibling objects", in: `{"timestamp":"2026-05-19T10:00:00Z","a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}`)}}},
		{name: "same name at two levels", in: `{"timestamp":"2026-05-19T10:00:00Z","k":{"k":{"k":1}}}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"k":{"k":{"k":1}}}`)}}},
		{name: "numbers", in: `{"timestamp":"2026-05-19T10:00:00Z","a":[0,-0,1,-1,0.5,-0.5e-7,1E+2,123456789012345678901234567890]}`,
			want: parseResult{Fields: Fields{Timestamp: ts, Extra: strp(`{"a":[0,-0,1,-1,0.5,-0.5e-7,1E+2,123456789012345678901234567890]}`)}}},

		// Dead letters: not JSON.
		{name: "tombstone", in: "", want: parseResult{Reason: "empty"}},
		{name: "whitespace only", in: "  ", want: parseResult{Reason: "syntax"}, msg: "only whitespace"},
		{name: "missing closing brace", in: `{"timestamp":"2026-05-19T10:00:00Z"`, want: parseResult{Reason: "syntax"}, msg: "byte 35"},
		{name: "raw newline", in: "{\"title\":\"a\nb\",\"timestamp\":\"2026-05-19T10:00:00Z\"}", want: parseResult{Reason: "syntax"}, msg: "control character 0x0a"},
		{name: "raw DEL is allowed", in: "{\"title\":\"a\x7fb\",\"timestamp\":\"2026-05-19T10:00:00Z\"}", want: parseResult{Fields: Fields{Title: strp("a\x7fb"), Timestamp: ts}}},
		{name: "invalid escape", in: `{"title":"\q","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}, msg: `invalid escape \q`},
		{name: "upper-case U escape", in: `{"title":"\U00e9","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "escape cut short", in: `{"title":"\u00", "timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "invalid UTF-8", in: "{\"title\":\"\xc3\x28\",\"timestamp\":\"2026-05-19T10:00:00Z\"}", want: parseResult{Reason: "syntax"}, msg: "invalid UTF-8"},
		{name: "overlong UTF-8", in: "{\"title\":\"\xc0\xaf\",\"timestamp\":\"2026-05-19T10:00:00Z\"}", want: parseResult{Reason: "syntax"}},
		{name: "UTF-8 cut short at the end", in: "{\"title\":\"\xe2\x82", want: parseResult{Reason: "syntax"}},
		{name: "lone high surrogate", in: `{"title":"\ud800","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}, msg: "surrogate"},
		{name: "high surrogate then a letter", in: `{"title":"\ud800\u0041","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}, msg: "surrogate"},
		{name: "two high surrogates", in: `{"title":"\ud800\ud800","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "lone low surrogate", in: `{"title":"\udfff","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "lone surrogate in an extra", in: `{"timestamp":"2026-05-19T10:00:00Z","x":["\ud800"]}`, want: parseResult{Reason: "syntax"}},
		{name: "lone surrogate in a name", in: `{"\ud800":1,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "leading zero", in: `{"timestamp":"2026-05-19T10:00:00Z","n":-01}`, want: parseResult{Reason: "syntax"}, msg: "leading zero"},
		{name: "empty exponent", in: `{"timestamp":"2026-05-19T10:00:00Z","n":1e}`, want: parseResult{Reason: "syntax"}},
		{name: "lone minus", in: `{"timestamp":"2026-05-19T10:00:00Z","n":-}`, want: parseResult{Reason: "syntax"}},
		{name: "NaN", in: `{"timestamp":"2026-05-19T10:00:00Z","n":NaN}`, want: parseResult{Reason: "syntax"}, msg: "NaN"},
		{name: "trailing comma", in: `{"timestamp":"2026-05-19T10:00:00Z",}`, want: parseResult{Reason: "syntax"}},
		{name: "leading comma", in: `{,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "syntax"}},
		{name: "double comma in array", in: `{"timestamp":"2026-05-19T10:00:00Z","a":[1,,2]}`, want: parseResult{Reason: "syntax"}},
		{name: "single quotes", in: `{'timestamp':'2026-05-19T10:00:00Z'}`, want: parseResult{Reason: "syntax"}, msg: "single quotes"},
		{name: "comment", in: `{"timestamp":"2026-05-19T10:00:00Z" /* c */}`, want: parseResult{Reason: "syntax"}},
		{name: "a syntax error beats a schema error", in: `{"source":1,"timestamp":null,"x":tru}`, want: parseResult{Reason: "syntax"}},
		{name: "syntax error after a duplicate", in: `{"a":1,"a":2,`, want: parseResult{Reason: "syntax"}},

		// Dead letters: not one object.
		{name: "array", in: `[]`, want: parseResult{Reason: "not_object"}, msg: "an array"},
		{name: "string", in: `"x"`, want: parseResult{Reason: "not_object"}},
		{name: "true", in: `true`, want: parseResult{Reason: "not_object"}},
		{name: "malformed array", in: `[1,]`, want: parseResult{Reason: "syntax"}},
		{name: "not an object beats trailing data", in: `1 2`, want: parseResult{Reason: "not_object"}},
		{name: "second object", in: `{"timestamp":"2026-05-19T10:00:00Z"} {"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "trailing_data"}, msg: "byte 37"},
		{name: "trailing data beats a schema error", in: `{"source":1}x`, want: parseResult{Reason: "trailing_data"}},
		{name: "trailing garbage that is not UTF-8", in: "{\"timestamp\":\"2026-05-19T10:00:00Z\"}\xff", want: parseResult{Reason: "trailing_data"}},

		// Dead letters: schema.
		{name: "source number", in: `{"source":1,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "wrong_type"}, msg: `"source"`},
		{name: "title true", in: `{"title":true,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "wrong_type"}, msg: `"title"`},
		{name: "title array", in: `{"title":["a"],"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "wrong_type"}},
		{name: "timestamp number", in: `{"timestamp":1779184800000}`, want: parseResult{Reason: "wrong_type"}, msg: "want string"},
		{name: "timestamp object", in: `{"timestamp":{"s":1}}`, want: parseResult{Reason: "wrong_type"}},
		{name: "missing timestamp", in: `{"source":"news"}`, want: parseResult{Reason: "missing_timestamp"}},
		{name: "null timestamp", in: `{"timestamp":null}`, want: parseResult{Reason: "missing_timestamp"}, msg: "null"},
		{name: "bad timestamp", in: `{"timestamp":"yesterday"}`, want: parseResult{Reason: "bad_timestamp"}, msg: `"yesterday"`},
		{name: "escaped bad timestamp", in: `{"timestamp":"2026-05-19T10:00:00\u007a"}`, want: parseResult{Reason: "bad_timestamp"}},
		{name: "long bad timestamp is cut in the message", in: `{"timestamp":"` + strings.Repeat("9", 500) + `"}`, want: parseResult{Reason: "bad_timestamp"}, msg: "..."},
		{name: "duplicate kept member", in: `{"title":"a","title":"b","timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "duplicate_member"}, msg: `"title"`},
		{name: "duplicate null", in: `{"title":null,"title":null,"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "duplicate_member"}},
		{name: "duplicate via escape", in: `{"timestamp":"2026-05-19T10:00:00Z","a\u00e9":1,"aé":2}`, want: parseResult{Reason: "duplicate_member"}, msg: `"aé"`},
		{name: "duplicate in nested object", in: `{"timestamp":"2026-05-19T10:00:00Z","m":[{"k":1,"j":2,"k":3}]}`, want: parseResult{Reason: "duplicate_member"}, msg: "nested"},
		{name: "duplicate in a wrong-typed member", in: `{"title":{"a":1,"a":2},"timestamp":"2026-05-19T10:00:00Z"}`, want: parseResult{Reason: "duplicate_member"}},
		{name: "first schema error wins: wrong type", in: `{"source":1,"timestamp":"bad","source":2}`, want: parseResult{Reason: "wrong_type"}},
		{name: "first schema error wins: bad timestamp", in: `{"timestamp":"bad","source":1}`, want: parseResult{Reason: "bad_timestamp"}},
		{name: "first schema error wins: duplicate", in: `{"a":1,"a":2,"source":1}`, want: parseResult{Reason: "duplicate_member"}},
		{name: "missing timestamp loses to others", in: `{"source":1}`, want: parseResult{Reason: "wrong_type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []byte
			if tt.in != "" {
				in = []byte(tt.in)
			}
			f, err := Parse(in)
			got := parseResult{Fields: f, Reason: Reason(err)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s\nerr: %v", tt.in, diff, err)
			}
			if tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
				t.Errorf("Parse(%q) error %v, want it to mention %q", tt.in, err, tt.msg)
			}
			checkOneSentinel(t, in, err)
			checkAgainstOracle(t, in)
		})
	}
}

func TestMalformedCorpus(t *testing.T) {
	if len(MalformedCorpus) < 25 || len(MalformedCorpus) != len(MalformedCases) {
		t.Fatalf("MalformedCorpus has %d values for %d cases, want at least 25", len(MalformedCorpus), len(MalformedCases))
	}
	names := map[string]bool{}
	byReason := map[string]int{}
	for i, c := range MalformedCases {
		t.Run(c.Name, func(t *testing.T) {
			if names[c.Name] {
				t.Fatalf("duplicate case name")
			}
			names[c.Name] = true
			if len(c.Value) == 0 || !bytes.Equal(MalformedCorpus[i], c.Value) {
				t.Fatalf("corpus value %d is %q, want the case's %q", i, MalformedCorpus[i], c.Value)
			}
			f, err := Parse(c.Value)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want a %s error", c.Value, f, c.Reason)
			}
			if got := Reason(err); got != c.Reason {
				t.Fatalf("Parse(%q): reason %q (%v), want %q", c.Value, got, err, c.Reason)
			}
			byReason[c.Reason]++
			checkAgainstOracle(t, c.Value)
		})
	}
	for _, r := range Reasons() {
		if r != "empty" && r != "other" && byReason[r] == 0 {
			t.Errorf("no malformed case for reason %q", r)
		}
	}
}

func TestValidSamples(t *testing.T) {
	if len(ValidSamples) < 3 {
		t.Fatalf("only %d valid samples", len(ValidSamples))
	}
	extras := 0
	for _, v := range ValidSamples {
		f, err := Parse(v)
		if err != nil {
			t.Fatalf("Parse(%q): %v", v, err)
		}
		if f.Extra != nil {
			extras++
		}
		checkAgainstOracle(t, v)
	}
	if extras == 0 {
		t.Errorf("no valid sample has extra members")
	}
}

// TestDifferential runs the encoding/json oracle on every corpus value and
// on systematic mutations of them: each byte deleted, replaced or followed by
// a byte that matters to JSON, and every prefix.
func TestDifferential(t *testing.T) {
	var seeds [][]byte
	seeds = append(seeds, MalformedCorpus...)
	seeds = append(seeds, ValidSamples...)
	seeds = append(seeds, []byte(`{"timestamp":"2026-05-19T10:00:00Z","a":{"b":[1,"\u00e9\ud83d\udcb0",{"c":null}]},"\u0061b":-1.5E-3}`))
	interesting := []byte("{}[]\",:\\ \n0-1.eEtnu\x00\x7f\xc3\xff")
	if testing.Short() {
		interesting = []byte("{}\",:\\")
	}
	n := 0
	for _, s := range seeds {
		for i := 0; i <= len(s); i++ {
			checkAgainstOracle(t, s[:i])
			n++
			if i == len(s) {
				break
			}
			checkAgainstOracle(t, append(bytes.Clone(s[:i]), s[i+1:]...))
			for _, c := range interesting {
				m := bytes.Clone(s)
				m[i] = c
				checkAgainstOracle(t, m)
				checkAgainstOracle(t, append(append(bytes.Clone(s[:i]), c), s[i:]...))
				n += 2
			}
		}
	}
	t.Logf("%d inputs checked against encoding/json", n)
}

func TestReason(t *testing.T) {
	if got := Reason(nil); got != "" {
		t.Errorf("Reason(nil) = %q, want empty", got)
	}
	if got := Reason(errors.New("boom")); got != "other" {
		t.Errorf("Reason(other error) = %q, want other", got)
	}
	want := []string{"empty", "syntax", "not_object", "trailing_data", "wrong_type", "missing_timestamp", "bad_timestamp", "duplicate_member", "other"}
	if diff := cmp.Diff(want, Reasons()); diff != "" {
		t.Errorf("Reasons() (-want +got):\n%s", diff)
	}
	for i, s := range allSentinels {
		wrapped := fmt.Errorf("bronze: offset 7: %w", fmt.Errorf("%w: detail", s))
		if got := Reason(wrapped); got != want[i] {
			t.Errorf("Reason(%v) = %q, want %q", wrapped, got, want[i])
		}
	}
}

func TestEmpty(t *testing.T) {
	_, errNil := Parse(nil)
	_, errZero := Parse([]byte{})
	for _, err := range []error{errNil, errZero} {
		if !errors.Is(err, ErrEmpty) {
			t.Errorf("got %v, want ErrEmpty", err)
		}
	}
	if !strings.Contains(errNil.Error(), "tombstone") {
		t.Errorf("nil value error %q does not say tombstone", errNil)
	}
}

// TestDepth checks the nesting limit against encoding/json's: 10000 open
// arrays and objects are fine, 10001 are not.
func TestDepth(t *testing.T) {
	for _, tt := range []struct {
		depth              int
		open, bottom, clos string
		reason             string
	}{
		{10000, "[", "", "]", ""},
		{10001, "[", "", "]", "syntax"},
		{10000, `{"a":`, "1", "}", ""},
		{10001, `{"a":`, "1", "}", "syntax"},
	} {
		// The top-level object is one level.
		inner := strings.Repeat(tt.open, tt.depth-1) + tt.bottom + strings.Repeat(tt.clos, tt.depth-1)
		in := []byte(`{"timestamp":"2026-05-19T10:00:00Z","x":` + inner + `}`)
		_, err := Parse(in)
		if got := Reason(err); got != tt.reason {
			t.Errorf("depth %d of %q: reason %q (%v), want %q", tt.depth, tt.open, got, err, tt.reason)
		}
		if tt.reason != "" && !strings.Contains(err.Error(), "nesting deeper than 10000") {
			t.Errorf("depth %d of %q: error %v does not name the limit", tt.depth, tt.open, err)
		}
		checkAgainstOracle(t, in)
	}
	// A deep top-level array is not an object, or a syntax error when too deep.
	for depth, want := range map[int]string{10000: "not_object", 10001: "syntax"} {
		in := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if _, err := Parse(in); Reason(err) != want {
			t.Errorf("top-level array of depth %d: %v, want %s", depth, err, want)
		}
	}
}

// TestManyMembers covers objects with enough names to check repeats with a
// map.
func TestManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-05-19T10:00:00Z","nested":{`)
	for i := range 100 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"last":0}`)
	for i := range 100 {
		fmt.Fprintf(&b, `,"x\u0041%d":%d`, i, i) // escaped, so decoded into the scratch buffer
	}
	ok := b.String() + "}"
	f, err := Parse([]byte(ok))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !strings.Contains(*f.Extra, `"xA99":99`) {
		t.Errorf("Extra lacks xA99: %.200s", *f.Extra)
	}
	checkAgainstOracle(t, []byte(ok))

	for _, dup := range []string{`,"xA42":0}`, `,"x\u004142":0}`, `,"nested":1}`} {
		in := []byte(b.String() + dup)
		if _, err := Parse(in); !errors.Is(err, ErrDuplicateMember) {
			t.Errorf("top-level repeat %s: %v, want ErrDuplicateMember", dup, err)
		}
		checkAgainstOracle(t, in)
	}
	nestedDup := strings.Replace(ok, `"last":0}`, `"last":0,"k77":1}`, 1)
	if _, err := Parse([]byte(nestedDup)); !errors.Is(err, ErrDuplicateMember) {
		t.Errorf("nested repeat: %v, want ErrDuplicateMember", err)
	}
	checkAgainstOracle(t, []byte(nestedDup))
}

// TestNoAliasing checks that the row does not share memory with the record
// value, which the Kafka client may reuse.
func TestNoAliasing(t *testing.T) {
	in := []byte(`{"source":"news","title":"t","timestamp":"2026-05-19T10:00:00Z","x":[1]}`)
	f, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	before := []string{*f.Source, *f.Title, *f.Extra}
	for i := range in {
		in[i] = 'X'
	}
	after := []string{*f.Source, *f.Title, *f.Extra}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("row changed with its input (-before +after):\n%s", diff)
	}
}

func TestAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are for full, race-free runs")
	}
	for _, tt := range []struct {
		in   string
		max  float64
		what string
	}{
		{sampleEvent, 2, "one for the bytes of both strings, one for their headers"},
		{`{"timestamp":"2026-05-19T10:00:00Z"}`, 0, "no strings"},
		{`{"source":"a\u00e9","title":"\ud83d\udcb0","timestamp":"2026-05-19T10:00:00\u005a"}`, 2, "escapes decoded in place"},
		{`{"source":"s","timestamp":"2026-05-19T10:00:00Z","a":{"b":[1,2]},"c":"d"}`, 2, "extras with pooled scratch"},
	} {
		in := []byte(tt.in)
		got := testing.AllocsPerRun(200, func() {
			if _, err := Parse(in); err != nil {
				t.Fatal(err)
			}
		})
		if got > tt.max {
			t.Errorf("Parse(%s): %.1f allocations, want at most %.0f (%s)", tt.in, got, tt.max, tt.what)
		}
	}
}

// TestRepeatAtEveryPosition repeats each name of a large object, so that
// repeats are caught before, at and after the switch to a map.
func TestRepeatAtEveryPosition(t *testing.T) {
	const n = 3 * linearKeys
	for _, nested := range []bool{false, true} {
		for k := range n {
			var b strings.Builder
			b.WriteString(`{"timestamp":"2026-05-19T10:00:00Z"`)
			if nested {
				b.WriteString(`,"m":{"first":0`)
			}
			for i := range n {
				fmt.Fprintf(&b, `,"k%d":%d`, i, i)
			}
			fmt.Fprintf(&b, `,"k%d":-1`, k)
			if nested {
				b.WriteString(`}`)
			}
			b.WriteString(`}`)
			in := []byte(b.String())
			if _, err := Parse(in); !errors.Is(err, ErrDuplicateMember) {
				t.Errorf("nested=%v, k%d repeated: %v, want ErrDuplicateMember", nested, k, err)
			}
		}
	}
}

// TestControlCharactersInNames checks that every ASCII character escaped in
// an extra member name comes out as valid JSON with the same name.
func TestControlCharactersInNames(t *testing.T) {
	for c := range 0x80 {
		in := []byte(fmt.Sprintf(`{"timestamp":"2026-05-19T10:00:00Z","\u%04x":1}`, c))
		checkAgainstOracle(t, in)
		if _, err := Parse(in); err != nil {
			t.Errorf("name \\u%04x: %v", c, err)
		}
	}
}
