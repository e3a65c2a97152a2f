package event

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects accepted, counting
// the top-level object as 1. It is the limit of encoding/json.
const maxDepth = 10000

// parser scans one record value. The hot path (a flat object of strings)
// touches only b and the stack of Parse; sc is fetched from a pool the
// first time a record has an extra member or a nested array or object.
type parser struct {
	b   []byte
	sc  *scratch
	sem error // the first schema error, reported if the syntax is valid
}

func (p *parser) syntaxf(off int, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, off, fmt.Sprintf(format, args...))
}

// semanticf records a schema error; only the first one is kept, and it is
// reported only if the whole record turns out to be well-formed.
func (p *parser) semanticf(kind error, format string, args ...any) {
	if p.sem == nil {
		p.sem = fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))
	}
}

// extraMember is one top-level member other than the kept ones: its raw name
// b[ks:ke] (without quotes) and its raw value b[vs:ve].
type extraMember struct {
	ks, ke, vs, ve int
	kesc           bool
}

// keyRef is a decoded member name: b[s:e] of the input when the raw name has
// no escapes, else kbuf[s:e] of the scratch.
type keyRef struct {
	s, e  int
	inBuf bool
}

// level is one open object whose member names are being checked for repeats.
// It holds no pointers, so pushing and popping levels costs no GC write
// barriers.
type level struct {
	keys, kbuf int // where its names start in scratch.keys and scratch.kbuf
	set        int // 1 + its index in scratch.sets once it has many names, else 0
}

// linearKeys is how many names an object may have before repeats are looked
// up in a map rather than by comparing with every earlier name.
const linearKeys = 16

// scratch is the reusable working memory for records with extra members or
// nested values.
type scratch struct {
	stack   []byte // '[' or '{' per open container below the top-level object
	levels  []level
	keys    []keyRef
	kbuf    []byte
	members []extraMember
	sets    []map[string]struct{} // names of the open objects with many of them
	top     bool                  // levels[0] is the top-level object
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (p *parser) scratch() *scratch {
	if p.sc == nil {
		p.sc = scratchPool.Get().(*scratch)
	}
	return p.sc
}

func (sc *scratch) release() {
	// Do not keep the memory of a freak record alive in the pool.
	if cap(sc.kbuf) > 64<<10 || cap(sc.keys) > 4096 || cap(sc.stack) > 4096 || cap(sc.members) > 4096 || cap(sc.levels) > 4096 {
		return
	}
	clear(sc.sets)
	sc.sets = sc.sets[:0]
	sc.stack, sc.levels, sc.keys, sc.kbuf, sc.members = sc.stack[:0], sc.levels[:0], sc.keys[:0], sc.kbuf[:0], sc.members[:0]
	sc.top = false
	scratchPool.Put(sc)
}

func (sc *scratch) pushLevel() {
	sc.levels = append(sc.levels, level{keys: len(sc.keys), kbuf: len(sc.kbuf)})
}

func (sc *scratch) popLevel() {
	n := len(sc.levels) - 1
	lv := sc.levels[n]
	sc.keys, sc.kbuf = sc.keys[:lv.keys], sc.kbuf[:lv.kbuf]
	if lv.set > 0 {
		sc.sets[lv.set-1] = nil
		sc.sets = sc.sets[:lv.set-1]
	}
	sc.levels = sc.levels[:n]
}

func (sc *scratch) key(b []byte, r keyRef) []byte {
	if r.inBuf {
		return sc.kbuf[r.s:r.e]
	}
	return b[r.s:r.e]
}

// addKey adds the raw member name b[s:e] to the innermost open object. It
// returns the decoded name and whether the object already had it.
func (sc *scratch) addKey(b []byte, s, e int, esc bool) ([]byte, bool) {
	r := keyRef{s: s, e: e}
	if esc {
		r = keyRef{s: len(sc.kbuf), inBuf: true}
		sc.kbuf = appendUnescaped(sc.kbuf, b[s:e])
		r.e = len(sc.kbuf)
	}
	k := sc.key(b, r)
	lv := &sc.levels[len(sc.levels)-1]
	if lv.set > 0 {
		set := sc.sets[lv.set-1]
		if _, dup := set[string(k)]; dup {
			return k, true
		}
		set[string(k)] = struct{}{}
		return k, false
	}
	for _, o := range sc.keys[lv.keys:] {
		if bytes.Equal(sc.key(b, o), k) {
			return k, true
		}
	}
	sc.keys = append(sc.keys, r)
	if n := len(sc.keys) - lv.keys; n > linearKeys {
		set := make(map[string]struct{}, 2*n)
		for _, o := range sc.keys[lv.keys:] {
			set[string(sc.key(b, o))] = struct{}{}
		}
		sc.sets = append(sc.sets, set)
		lv.set = len(sc.sets)
	}
	return k, false
}

// extraKey checks the name of a top-level extra member b[ks:ke] for repeats.
func (p *parser) extraKey(ks, ke int, esc bool) {
	sc := p.scratch()
	if !sc.top {
		sc.pushLevel()
		sc.top = true
	}
	if k, dup := sc.addKey(p.b, ks, ke, esc); dup {
		p.semanticf(ErrDuplicateMember, "%q repeated at byte %d", k, ks-1)
	}
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// plain marks the bytes that can stand for themselves in a JSON string
// without further checks: printable ASCII except '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates a JSON string whose opening quote is at i-1. It
// returns the index after the closing quote and whether the string has
// escapes.
func (p *parser) scanString(i int) (int, bool, error) {
	b := p.b
	esc := false
	for {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, esc, p.syntaxf(i, "unexpected end of input inside a string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, esc, p.syntaxf(i+1, "unexpected end of input inside a string escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok {
					return i, esc, p.syntaxf(i, "invalid \\u escape, want 4 hex digits")
				}
				switch {
				case r >= 0xD800 && r < 0xDC00:
					if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						if r2, ok := hex4(b, i+8); ok && r2 >= 0xDC00 && r2 < 0xE000 {
							i += 12
							continue
						}
					}
					return i, esc, p.syntaxf(i, "lone UTF-16 surrogate \\u%04x, not followed by a low surrogate", r)
				case r >= 0xDC00 && r < 0xE000:
					return i, esc, p.syntaxf(i, "lone UTF-16 surrogate \\u%04x, not preceded by a high surrogate", r)
				}
				i += 6
			default:
				return i, esc, p.syntaxf(i, "invalid escape \\%s in a string", printable(b[i+1]))
			}
		case c < 0x20:
			return i, esc, p.syntaxf(i, "control character 0x%02x in a string, must be escaped", c)
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, esc, p.syntaxf(i, "invalid UTF-8 (byte 0x%02x) in a string", c)
			}
			i += size
		}
	}
}

// printable shows one byte of an escape in an error message.
func printable(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(rune(c))
	}
	return fmt.Sprintf("<0x%02x>", c)
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 decodes the 4 hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		d := unhex(c)
		if d < 0 {
			return 0, false
		}
		r = r<<4 | d
	}
	return r, true
}

// decodeEscape decodes the escape at raw[i] of a validated string. It
// returns the character and the length of the escape.
func decodeEscape(raw []byte, i int) (rune, int) {
	switch raw[i+1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, _ := hex4(raw, i+2)
		if r >= 0xD800 && r < 0xDC00 {
			r2, _ := hex4(raw, i+8)
			return 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00), 12
		}
		return r, 6
	default: // '"', '\\', '/'
		return rune(raw[i+1]), 2
	}
}

// appendUnescaped appends the decoded body of a validated JSON string.
func appendUnescaped(dst, raw []byte) []byte {
	for len(raw) > 0 {
		j := bytes.IndexByte(raw, '\\')
		if j < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:j]...)
		r, n := decodeEscape(raw, j)
		dst = utf8.AppendRune(dst, r)
		raw = raw[j+n:]
	}
	return dst
}

// writeStringBody writes the decoded body of a validated JSON string.
func writeStringBody(sb *strings.Builder, raw []byte, esc bool) {
	writeDecoded(sb, raw, esc, false)
}

// writeKey writes a validated member name as a JSON string in its shortest
// form: escapes are decoded, and only '"', '\\' and control characters are
// escaped again.
func writeKey(sb *strings.Builder, raw []byte, esc bool) {
	sb.WriteByte('"')
	writeDecoded(sb, raw, esc, true)
	sb.WriteByte('"')
}

// writeDecoded writes the body of a validated JSON string with its escapes
// decoded (esc: it has some) and, with requote, the characters JSON must
// escape escaped again in their shortest form.
func writeDecoded(sb *strings.Builder, raw []byte, esc, requote bool) {
	if !esc {
		sb.Write(raw)
		return
	}
	for len(raw) > 0 {
		j := bytes.IndexByte(raw, '\\')
		if j < 0 {
			sb.Write(raw)
			return
		}
		sb.Write(raw[:j])
		r, n := decodeEscape(raw, j)
		if requote {
			writeQuoted(sb, r)
		} else {
			sb.WriteRune(r)
		}
		raw = raw[j+n:]
	}
}

// writeQuoted writes r as a JSON string holds it: '"', '\\' and control
// characters escaped, in their shortest form.
func writeQuoted(sb *strings.Builder, r rune) {
	switch {
	case r == '"':
		sb.WriteString(`\"`)
	case r == '\\':
		sb.WriteString(`\\`)
	case r == '\n':
		sb.WriteString(`\n`)
	case r == '\r':
		sb.WriteString(`\r`)
	case r == '\t':
		sb.WriteString(`\t`)
	case r == '\b':
		sb.WriteString(`\b`)
	case r == '\f':
		sb.WriteString(`\f`)
	case r < 0x20:
		const hexDigits = "0123456789abcdef"
		sb.WriteString(`\u00`)
		sb.WriteByte(hexDigits[r>>4])
		sb.WriteByte(hexDigits[r&0xf])
	default:
		sb.WriteRune(r)
	}
}

// writeCompact writes a validated JSON value without the whitespace between
// its tokens.
func writeCompact(sb *strings.Builder, v []byte) {
	if v[0] != '{' && v[0] != '[' {
		sb.Write(v)
		return
	}
	start := 0
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == '"':
			i++
			for v[i] != '"' {
				if v[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case isWS(c):
			sb.Write(v[start:i])
			for i < len(v) && isWS(v[i]) {
				i++
			}
			start = i
		default:
			i++
		}
	}
	sb.Write(v[start:])
}

// scanValue validates the JSON value that starts at b[i], inside depth open
// containers. It returns the index after the value.
func (p *parser) scanValue(i, depth int) (int, error) {
	b := p.b
	if i >= len(b) {
		return i, p.syntaxf(i, "unexpected end of input, want a value")
	}
	switch c := b[i]; c {
	case '"':
		end, _, err := p.scanString(i + 1)
		return end, err
	case '{', '[':
		return p.scanContainer(i, depth)
	case 't':
		return p.scanLiteral(i, "true")
	case 'f':
		return p.scanLiteral(i, "false")
	case 'n':
		return p.scanLiteral(i, "null")
	default:
		if c == '-' || isDigit(c) {
			return p.scanNumber(i)
		}
		return i, p.syntaxf(i, "found %s, want the start of a value%s", describe(c), hint(c))
	}
}

// hint explains the common non-JSON spellings.
func hint(c byte) string {
	switch c {
	case '\'':
		return " (single quotes are not JSON)"
	case '/', '#':
		return " (comments are not JSON)"
	case 'N', 'I':
		return " (NaN and Infinity are not JSON)"
	case '+', '.':
		return " (a JSON number starts with '-' or a digit)"
	case ']', '}':
		return " (a trailing comma?)"
	}
	return ""
}

func (p *parser) scanLiteral(i int, lit string) (int, error) {
	b := p.b
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return i + k, p.syntaxf(i+k, "unexpected end of input inside %q", lit)
		}
		if b[i+k] != lit[k] {
			return i + k, p.syntaxf(i+k, "found %s inside what looks like %q%s", describe(b[i+k]), lit, hint(b[i]))
		}
	}
	return i + len(lit), nil
}

// scanNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func (p *parser) scanNumber(i int) (int, error) {
	b := p.b
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, p.syntaxf(i, "unexpected end of input in a number")
	case b[i] == '0':
		i++
		if i < len(b) && isDigit(b[i]) {
			return i, p.syntaxf(start, "number with a leading zero")
		}
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, p.syntaxf(i, "found %s after '-', want a digit%s", describe(b[i]), hint(b[i]))
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, p.syntaxf(i, "want a digit after the decimal point")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, p.syntaxf(i, "want a digit in the exponent")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, nil
}

// scanMemberName validates the member name at b[i] of the innermost open
// object, checks it for repeats, and consumes the ':' after it. It returns
// the index of the member's value.
func (p *parser) scanMemberName(i int) (int, error) {
	b := p.b
	if i >= len(b) {
		return i, p.syntaxf(i, "unexpected end of input, want a member name")
	}
	if b[i] != '"' {
		return i, p.syntaxf(i, "found %s, want '\"' to begin a member name%s", describe(b[i]), hint(b[i]))
	}
	end, esc, err := p.scanString(i + 1)
	if err != nil {
		return end, err
	}
	if k, dup := p.sc.addKey(b, i+1, end-1, esc); dup {
		p.semanticf(ErrDuplicateMember, "%q repeated in a nested object at byte %d", k, i)
	}
	i = skipWS(b, end)
	if i >= len(b) {
		return i, p.syntaxf(i, "unexpected end of input, want ':' after a member name")
	}
	if b[i] != ':' {
		return i, p.syntaxf(i, "found %s, want ':' after a member name", describe(b[i]))
	}
	return skipWS(b, i+1), nil
}

// scanContainer validates the array or object at b[i], inside depth open
// containers, without recursion. It returns the index after it.
func (p *parser) scanContainer(i, depth int) (int, error) {
	sc := p.scratch()
	b := p.b
	base := len(sc.stack)
	var err error
	for {
		// i is at the start of a value.
		if i >= len(b) {
			return i, p.syntaxf(i, "unexpected end of input, want a value")
		}
		switch c := b[i]; c {
		case '[', '{':
			depth++
			if depth > maxDepth {
				return i, p.syntaxf(i, "nesting deeper than %d arrays and objects", maxDepth)
			}
			i = skipWS(b, i+1)
			if c == '[' {
				if i < len(b) && b[i] == ']' {
					i++
					depth--
					break
				}
				sc.stack = append(sc.stack, '[')
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				depth--
				break
			}
			sc.stack = append(sc.stack, '{')
			sc.pushLevel()
			if i, err = p.scanMemberName(i); err != nil {
				return i, err
			}
			continue
		default:
			if i, err = p.scanValue(i, depth); err != nil {
				return i, err
			}
		}
		// After a value: close containers until one goes on.
		for {
			if len(sc.stack) == base {
				return i, nil
			}
			top := sc.stack[len(sc.stack)-1]
			what := "after an array element, want ',' or ']'"
			if top == '{' {
				what = "after an object member, want ',' or '}'"
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, p.syntaxf(i, "unexpected end of input %s", what)
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				if top == '{' {
					if i, err = p.scanMemberName(i); err != nil {
						return i, err
					}
				}
				break
			}
			switch {
			case top == '{' && b[i] == '}':
				sc.popLevel()
			case top == '[' && b[i] == ']':
			default:
				return i, p.syntaxf(i, "found %s %s", describe(b[i]), what)
			}
			i++
			depth--
			sc.stack = sc.stack[:len(sc.stack)-1]
		}
	}
}
