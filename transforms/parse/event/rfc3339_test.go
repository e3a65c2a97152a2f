package event

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// strictRFC3339 is the RFC 3339 date-time grammar (with an upper-case T and
// Z). time.Parse's lenient fallback accepts strings outside it.
var strictRFC3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

// checkRFC3339 compares parseRFC3339 with the oracle on one string.
func checkRFC3339(t *testing.T, s string) {
	t.Helper()
	got, why := parseRFC3339([]byte(s))
	want, ok := oracleTimestamp(s)
	switch {
	case ok && why != "":
		t.Fatalf("parseRFC3339(%q) rejected it (%s); time.Parse gives %d", s, why, want)
	case !ok && why == "":
		_, perr := time.Parse(time.RFC3339Nano, s)
		t.Fatalf("parseRFC3339(%q) = %d, want a rejection (time.Parse: %v, strict grammar: %v)", s, got, perr, strictRFC3339.MatchString(s))
	case ok && got != want:
		t.Fatalf("parseRFC3339(%q) = %d, time.Parse gives %d", s, got, want)
	}
}

func TestParseRFC3339(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC).UnixMicro()
	}
	tests := []struct {
		in   string
		want int64 // when ok
		ok   bool
	}{
		{"2026-05-19T10:00:00Z", utc(2026, 5, 19, 10, 0, 0, 0), true},
		{"1970-01-01T00:00:00Z", 0, true},
		{"1969-12-31T23:59:59.999999Z", -1, true},
		{"1969-12-31T23:59:59.9999995Z", -1, true}, // truncated, not rounded
		{"1970-01-01T00:00:00.0000009Z", 0, true},
		{"2026-05-19T10:00:00.1Z", utc(2026, 5, 19, 10, 0, 0, 100_000_000), true},
		{"2026-05-19T10:00:00.123456789123456789Z", utc(2026, 5, 19, 10, 0, 0, 123_456_000), true},
		{"2026-05-19T12:00:00+02:00", utc(2026, 5, 19, 10, 0, 0, 0), true},
		{"2026-05-19T04:30:00-05:30", utc(2026, 5, 19, 10, 0, 0, 0), true},
		{"2026-05-19T10:00:00-00:00", utc(2026, 5, 19, 10, 0, 0, 0), true},
		{"2026-01-01T00:00:00+23:59", utc(2025, 12, 31, 0, 1, 0, 0), true},
		{"0000-01-01T00:00:00Z", 0, false}, // pyarrow, Spark and Trino cannot read year 0
		{"0000-01-01T00:00:00+01:00", 0, false},
		{"9999-12-31T23:59:59.999999999-23:59", 0, false}, // year 10000 in UTC
		{"2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0, 0), true},
		{"2000-02-29T00:00:00Z", utc(2000, 2, 29, 0, 0, 0, 0), true},
		{"1900-02-29T00:00:00Z", 0, false},
		{"2026-02-29T00:00:00Z", 0, false},
		{"2026-04-31T00:00:00Z", 0, false},
		{"2026-00-10T00:00:00Z", 0, false},
		{"2026-13-10T00:00:00Z", 0, false},
		{"2026-05-00T00:00:00Z", 0, false},
		{"2026-05-19T24:00:00Z", 0, false},
		{"2026-05-19T10:60:00Z", 0, false},
		{"2026-05-19T10:00:60Z", utc(2026, 5, 19, 10, 0, 59, 999_999_000), true}, // a leap second: the minute's last microsecond
		{"2016-12-31T23:59:60.5Z", utc(2016, 12, 31, 23, 59, 59, 999_999_000), true},
		{"2016-12-31T15:59:60-08:00", utc(2016, 12, 31, 23, 59, 59, 999_999_000), true},
		{"2026-05-19T10:00:61Z", 0, false},
		{"0001-01-01T00:00:00Z", utc(1, 1, 1, 0, 0, 0, 0), true},
		{"9999-12-31T23:59:59.999999Z", utc(9999, 12, 31, 23, 59, 59, 999_999_000), true},
		{"0000-12-31T23:59:59Z", 0, false},      // year 0
		{"0001-01-01T00:00:00+00:01", 0, false}, // year 0 in UTC
		{"9999-12-31T23:59:59-23:59", 0, false}, // year 10000 in UTC
		{"9999-12-31T23:59:59.999999+00:00", utc(9999, 12, 31, 23, 59, 59, 999_999_000), true},
		{"2026-05-19t10:00:00Z", 0, false},
		{"2026-05-19T10:00:00z", 0, false},
		{"2026-05-19 10:00:00Z", 0, false},
		{"2026-05-19T10:00:00", 0, false},
		{"2026-05-19T10:00:00.Z", 0, false},
		{"2026-05-19T10:00:00,5Z", 0, false}, // time.Parse's fallback accepts
		{"2026-05-19T1:00:00Z", 0, false},    // time.Parse's fallback accepts
		{"2026-05-19T10:00:00+24:00", 0, false},
		{"2026-05-19T10:00:00+00:60", 0, false},
		{"2026-05-19T10:00:00+0200", 0, false},
		{"2026-05-19T10:00:00+02", 0, false},
		{"2026-05-19T10:00:00+02:00:00", 0, false},
		{"2026-05-19T10:00:00ZZ", 0, false},
		{"2026-05-19T10:00:00 Z", 0, false},
		{" 2026-05-19T10:00:00Z", 0, false},
		{"+2026-05-19T10:00:00Z", 0, false},
		{"12026-05-19T10:00:00Z", 0, false},
		{"2026-5-19T10:00:00Z", 0, false},
		{"2026-05-19T10:00:00.-1Z", 0, false},
		{"2026-05-19T10:00:00.1e3Z", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, why := parseRFC3339([]byte(tt.in))
			if (why == "") != tt.ok {
				t.Fatalf("parseRFC3339(%q) = %d, %q; want ok=%v", tt.in, got, why, tt.ok)
			}
			if tt.ok && got != tt.want {
				t.Fatalf("parseRFC3339(%q) = %d, want %d", tt.in, got, tt.want)
			}
			checkRFC3339(t, tt.in)
		})
	}
}

// TestParseRFC3339Differential compares with time.Parse on random valid
// timestamps and on every single-character mutation of some of them.
func TestParseRFC3339Differential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	n := 20000
	if testing.Short() {
		n = 2000
	}
	const mutants = "0123456789-:.,TtZz+ 9"
	for k := range n {
		sec := lo + rng.Int64N(hi-lo+1)
		if k%4 == 0 { // dense around now and the epoch too
			sec = rng.Int64N(4_000_000_000) - 1_000_000_000
		}
		off := 0
		if rng.IntN(3) > 0 {
			off = (rng.IntN(48*60) - 24*60) * 60 // within ±24h, some out of range
		}
		ts := time.Unix(sec, 0).In(time.FixedZone("", off))
		var b strings.Builder
		fmt.Fprintf(&b, "%04d-%02d-%02dT%02d:%02d:%02d", ts.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second())
		if digits := rng.IntN(14); digits > 0 {
			b.WriteByte('.')
			for range digits {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		switch {
		case off == 0 && rng.IntN(2) == 0:
			b.WriteByte('Z')
		default:
			sign, a := '+', off
			if a < 0 {
				sign, a = '-', -a
			}
			fmt.Fprintf(&b, "%c%02d:%02d", sign, a/3600, a/60%60)
		}
		s := b.String()
		if ts.Year() < 0 || ts.Year() > 9999 {
			continue // the local date needs more than 4 digits
		}
		checkRFC3339(t, s)
		if k%20 == 0 {
			for i := range len(s) {
				for _, c := range []byte(mutants) {
					checkRFC3339(t, s[:i]+string(c)+s[i+1:])
				}
				checkRFC3339(t, s[:i]+s[i+1:])
			}
		}
	}
}

func FuzzRFC3339(f *testing.F) {
	for _, s := range []string{
		"2026-05-19T10:00:00Z", "2026-05-19T10:00:00.123456789+02:00", "0000-01-01T00:00:00+01:00",
		"2026-05-19T10:00:00,5Z", "2026-05-19T1:00:00Z", "2026-05-19T10:00:00+24:00", "2024-02-29T23:59:59.9999999-23:59",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkRFC3339(t, s)
	})
}
