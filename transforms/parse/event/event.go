package event

import (
	"errors"
	"fmt"
	"strings"
)

// Fields are the members of one event that bronze keeps.
type Fields struct {
	Source    *string // nil when missing or JSON null
	Title     *string // nil when missing or JSON null
	Timestamp int64   // microseconds since the Unix epoch, UTC
	Extra     *string // JSON object text of the other members, nil when there are none
}

// The errors returned by Parse wrap exactly one of these sentinels.
// Structural problems win over schema problems: a record that is not exactly
// one well-formed JSON object gets ErrEmpty, ErrSyntax, ErrNotObject or
// ErrTrailingData (checked in that order) whatever its members hold. Among the
// schema problems of a well-formed object the first one in document order is
// reported; ErrMissingTimestamp is reported only when there is no other.
var (
	// ErrEmpty is returned when the value has no bytes at all: a Kafka
	// tombstone (nil value) or a zero-length value. Parse cannot tell the
	// two apart reliably; callers that store a null payload for tombstones
	// should test value == nil themselves.
	ErrEmpty = errors.New("empty record value")

	// ErrSyntax is returned when the record is not valid JSON: a malformed
	// token, a missing brace or bracket, a trailing comma, single quotes,
	// comments, NaN or Infinity, leading zeros in a number, a control
	// character or an invalid escape in a string, invalid UTF-8, a lone UTF-16
	// surrogate escape, nesting deeper than 10000, or only whitespace.
	ErrSyntax = errors.New("invalid JSON")

	// ErrNotObject is returned when the record's first JSON value is well
	// formed but is not an object (an array, string, number, true, false or
	// null), whether or not anything follows it.
	ErrNotObject = errors.New("JSON value is not an object")

	// ErrTrailingData is returned when a well-formed object is followed by
	// anything but whitespace, including a second object.
	ErrTrailingData = errors.New("data after the JSON object")

	// ErrWrongType is returned when "source" or "title" is neither a string
	// nor null, or when "timestamp" is neither a string nor null.
	ErrWrongType = errors.New("member has the wrong JSON type")

	// ErrMissingTimestamp is returned when the object has no "timestamp"
	// member, or when it is null.
	ErrMissingTimestamp = errors.New("timestamp is missing or null")

	// ErrBadTimestamp is returned when "timestamp" is a string that is not an
	// RFC 3339 date-time (see the package documentation for the exact form).
	ErrBadTimestamp = errors.New("timestamp is not RFC 3339")

	// ErrDuplicateMember is returned when an object repeats a member name,
	// at the top level or in an object nested inside another member. Names
	// are compared after their escapes are decoded.
	ErrDuplicateMember = errors.New("member name repeated")
)

// reasons maps each sentinel to its Reason; the order is the order in which
// Reason tests them.
var reasons = [...]struct {
	err  error
	name string
}{
	{ErrEmpty, "empty"},
	{ErrSyntax, "syntax"},
	{ErrNotObject, "not_object"},
	{ErrTrailingData, "trailing_data"},
	{ErrWrongType, "wrong_type"},
	{ErrMissingTimestamp, "missing_timestamp"},
	{ErrBadTimestamp, "bad_timestamp"},
	{ErrDuplicateMember, "duplicate_member"},
}

// Reason returns a short, stable class name for an error returned by
// Parse, for metric labels and the dead-letter table: "empty", "syntax",
// "not_object", "trailing_data", "wrong_type", "missing_timestamp",
// "bad_timestamp" or "duplicate_member". It returns "" for a nil error and
// "other" for an error that wraps none of the sentinels.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "other"
}

// Reasons lists every name Reason can return for a non-nil error, for
// pre-registering metric label values.
func Reasons() []string {
	out := make([]string, 0, len(reasons)+1)
	for _, r := range reasons {
		out = append(out, r.name)
	}
	return append(out, "other")
}

// The members bronze keeps.
const (
	memberExtra = iota
	memberSource
	memberTitle
	memberTimestamp
)

var memberNames = [...]string{"", "source", "title", "timestamp"}

// slot is what was seen of one kept member.
type slot struct {
	seen     bool // the member was present, whatever its value
	isString bool // its value was a string, at b[s:e] (without quotes)
	esc      bool // the string contains escapes
	s, e     int
}

// outStrings holds the string headers that Fields points at, so that a row
// costs one allocation for them and one for their bytes.
type outStrings struct {
	source, title, extra string
}

// Parse parses one Kafka record value. It returns an error wrapping
// exactly one of the Err* sentinels. It never keeps a reference to value.
func Parse(value []byte) (Fields, error) {
	if len(value) == 0 {
		if value == nil {
			return Fields{}, fmt.Errorf("%w: the record has no value (a tombstone)", ErrEmpty)
		}
		return Fields{}, fmt.Errorf("%w: the record value has zero bytes", ErrEmpty)
	}
	p := parser{b: value}
	f, err := p.parseEvent()
	if p.sc != nil {
		p.sc.release()
	}
	return f, err
}

func (p *parser) parseEvent() (Fields, error) {
	b := p.b
	i := skipWS(b, 0)
	if i == len(b) {
		return Fields{}, p.syntaxf(i, "no JSON value, only whitespace")
	}
	if b[i] != '{' {
		if _, err := p.scanValue(i, 0); err != nil {
			return Fields{}, err
		}
		return Fields{}, fmt.Errorf("%w: found %s at byte %d", ErrNotObject, kindName(b[i]), i)
	}

	var slots [4]slot
	ts := int64(0)
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) {
				return Fields{}, p.syntaxf(i, "unexpected end of input, want a member name")
			}
			if b[i] != '"' {
				return Fields{}, p.syntaxf(i, "found %s, want '\"' to begin a member name%s", describe(b[i]), hint(b[i]))
			}
			ks := i + 1
			ke, kesc, err := p.scanString(ks)
			if err != nil {
				return Fields{}, err
			}
			key := b[ks : ke-1]
			i = skipWS(b, ke)
			if i >= len(b) {
				return Fields{}, p.syntaxf(i, "unexpected end of input, want ':' after a member name")
			}
			if b[i] != ':' {
				return Fields{}, p.syntaxf(i, "found %s, want ':' after a member name", describe(b[i]))
			}
			i = skipWS(b, i+1)
			vs := i

			m := knownMember(key, kesc)
			if m == memberExtra {
				p.extraKey(ks, ke-1, kesc)
				if i, err = p.scanValue(i, 1); err != nil {
					return Fields{}, err
				}
				p.sc.members = append(p.sc.members, extraMember{ks: ks, ke: ke - 1, vs: vs, ve: i, kesc: kesc})
			} else {
				sl := &slots[m]
				if sl.seen {
					p.semanticf(ErrDuplicateMember, "%q repeated at byte %d", memberNames[m], ks-1)
				}
				sl.seen = true
				switch {
				case i < len(b) && b[i] == '"':
					end, esc, err := p.scanString(i + 1)
					if err != nil {
						return Fields{}, err
					}
					*sl = slot{seen: true, isString: true, esc: esc, s: i + 1, e: end - 1}
					if m == memberTimestamp && p.sem == nil {
						var why string
						if ts, why = parseTimestampString(b[i+1:end-1], esc); why != "" {
							p.semanticf(ErrBadTimestamp, "%q at byte %d is %s: %s", "timestamp", i, quoteShort(b[i+1:end-1], esc), why)
						}
					}
					i = end
				case i+4 <= len(b) && string(b[i:i+4]) == "null":
					sl.isString = false
					i += 4
				default:
					if i, err = p.scanValue(i, 1); err != nil {
						return Fields{}, err
					}
					want := "string or null"
					if m == memberTimestamp {
						want = "string"
					}
					p.semanticf(ErrWrongType, "%q at byte %d is %s, want %s", memberNames[m], vs, kindName(b[vs]), want)
				}
			}

			i = skipWS(b, i)
			if i >= len(b) {
				return Fields{}, p.syntaxf(i, "unexpected end of input, want ',' or '}' after an object member")
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] == '}' {
				i++
				break
			}
			return Fields{}, p.syntaxf(i, "found %s, want ',' or '}' after an object member", describe(b[i]))
		}
	}

	if j := skipWS(b, i); j != len(b) {
		what := "after it"
		if b[j] == '{' {
			what = "a second object?"
		}
		return Fields{}, fmt.Errorf("%w: found %s at byte %d (%s)", ErrTrailingData, describe(b[j]), j, what)
	}
	if p.sem != nil {
		return Fields{}, p.sem
	}
	tsl := &slots[memberTimestamp]
	if !tsl.isString {
		if tsl.seen {
			return Fields{}, fmt.Errorf("%w: %q is null", ErrMissingTimestamp, "timestamp")
		}
		return Fields{}, fmt.Errorf("%w: the object has no %q member", ErrMissingTimestamp, "timestamp")
	}

	f := Fields{Timestamp: ts}
	src, ttl := &slots[memberSource], &slots[memberTitle]
	var extras []extraMember
	if p.sc != nil {
		extras = p.sc.members
	}
	if !src.isString && !ttl.isString && len(extras) == 0 {
		return f, nil
	}

	// One buffer for the bytes of every string, one struct for the headers.
	// Decoding and compacting never make text longer, so the raw lengths
	// bound the size.
	size := 0
	if src.isString {
		size += src.e - src.s
	}
	if ttl.isString {
		size += ttl.e - ttl.s
	}
	if len(extras) > 0 {
		size += 2
		for _, x := range extras {
			size += (x.ke - x.ks) + (x.ve - x.vs) + 4
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	if src.isString {
		writeStringBody(&sb, b[src.s:src.e], src.esc)
	}
	n1 := sb.Len()
	if ttl.isString {
		writeStringBody(&sb, b[ttl.s:ttl.e], ttl.esc)
	}
	n2 := sb.Len()
	if len(extras) > 0 {
		sb.WriteByte('{')
		for k, x := range extras {
			if k > 0 {
				sb.WriteByte(',')
			}
			writeKey(&sb, b[x.ks:x.ke], x.kesc)
			sb.WriteByte(':')
			writeCompact(&sb, b[x.vs:x.ve])
		}
		sb.WriteByte('}')
	}
	all := sb.String()
	out := new(outStrings)
	if src.isString {
		out.source = all[:n1]
		f.Source = &out.source
	}
	if ttl.isString {
		out.title = all[n1:n2]
		f.Title = &out.title
	}
	if len(extras) > 0 {
		out.extra = all[n2:]
		f.Extra = &out.extra
	}
	return f, nil
}

// knownMember reports which kept member a raw member name is, decoding its
// escapes if it has any.
func knownMember(key []byte, esc bool) int {
	if esc {
		// A kept name is at most 9 characters, each at most 6 bytes escaped
		// (no kept name needs a surrogate pair).
		if len(key) > 9*6 {
			return memberExtra
		}
		var tmp [9 * 6]byte
		key = appendUnescaped(tmp[:0], key)
	}
	switch len(key) {
	case 6:
		if string(key) == "source" {
			return memberSource
		}
	case 5:
		if string(key) == "title" {
			return memberTitle
		}
	case 9:
		if string(key) == "timestamp" {
			return memberTimestamp
		}
	}
	return memberExtra
}

// parseTimestampString parses the body of a JSON string as RFC 3339.
func parseTimestampString(raw []byte, esc bool) (int64, string) {
	if esc {
		var tmp [64]byte
		raw = appendUnescaped(tmp[:0], raw)
	}
	return parseRFC3339(raw)
}

// quoteShort quotes the decoded body of a JSON string for an error message,
// cut to a readable length.
func quoteShort(raw []byte, esc bool) string {
	if esc {
		raw = appendUnescaped(nil, raw)
	}
	const max = 64
	if len(raw) > max {
		return fmt.Sprintf("%q...", raw[:max])
	}
	return fmt.Sprintf("%q", raw)
}

// kindName names the kind of JSON value that starts with c.
func kindName(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// describe names one byte of input for an error message.
func describe(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
