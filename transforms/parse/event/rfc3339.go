package event

import "strconv"

// parseRFC3339 parses an RFC 3339 date-time,
//
//	YYYY-MM-DDThh:mm:ss[.f...](Z|+hh:mm|-hh:mm)
//
// and returns microseconds since the Unix epoch, UTC, or a reason it is not
// one. It accepts exactly what the RFC 3339 fast path of
// time.Parse(time.RFC3339Nano, s) accepts: years 0000-9999, a real calendar
// day, hours 00-23, minutes 00-59, seconds 00-60, an upper-case
// 'T' and 'Z', a fraction of any length after a '.', and an offset of at most
// 23:59. Digits of the fraction beyond microseconds are truncated, as
// time.Time.UnixMicro does. The forms that only time.Parse's lenient fallback
// accepts (a one-digit hour, ',' before the fraction, offsets +24:00 or
// +hh:60) are not RFC 3339 and are rejected.
//
// Two edges differ from time.Parse (docs/DESIGN.md, "Tables"): a leap second
// (ss = 60, valid RFC 3339) is stored as the last microsecond of its minute,
// hh:mm:59.999999, which keeps the order of events and the minute and day
// they belong to; and an instant outside the years 0001-9999 once in UTC
// (0000-01-01T00:00:00+23:59, 9999-12-31T23:59:59-23:59) is refused, because
// pyarrow, Spark and Trino cannot read such timestamps back.
func parseRFC3339(s []byte) (int64, string) {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return 0, "too short for YYYY-MM-DDThh:mm:ssZ"
	}
	for _, k := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if !isDigit(s[k]) {
			return 0, "want a digit at position " + strconv.Itoa(k)
		}
	}
	if s[4] != '-' || s[7] != '-' {
		return 0, "want YYYY-MM-DD"
	}
	if s[10] != 'T' {
		return 0, "want 'T' between date and time"
	}
	if s[13] != ':' || s[16] != ':' {
		return 0, "want hh:mm:ss"
	}
	year := num2(s[0:2])*100 + num2(s[2:4])
	month := num2(s[5:7])
	day := num2(s[8:10])
	hour := num2(s[11:13])
	minute := num2(s[14:16])
	sec := num2(s[17:19])
	switch {
	case month < 1 || month > 12:
		return 0, "month out of range"
	case day < 1 || day > daysIn(month, year):
		return 0, "day out of range"
	case hour > 23:
		return 0, "hour out of range"
	case minute > 59:
		return 0, "minute out of range"
	case sec > 60:
		return 0, "second out of range"
	}
	leap := sec == 60

	i := 19
	var micros int64
	if s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			if i-start < 6 {
				micros = micros*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, "want digits after '.'"
		}
		for n := i - start; n < 6; n++ {
			micros *= 10
		}
	}

	var offset int64 // seconds east of UTC
	switch rest := s[i:]; {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
		isDigit(rest[1]) && isDigit(rest[2]) && isDigit(rest[4]) && isDigit(rest[5]):
		oh, om := num2(rest[1:3]), num2(rest[4:6])
		if oh > 23 || om > 59 {
			return 0, "offset out of range"
		}
		offset = int64(oh*3600 + om*60)
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, "want 'Z' or an offset +hh:mm or -hh:mm at the end"
	}

	if leap {
		sec, micros = 59, 999_999
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - offset
	us := secs*1_000_000 + micros
	if us < minMicros || us > maxMicros {
		return 0, "outside the years 0001-9999 in UTC"
	}
	return us, ""
}

// minMicros and maxMicros bound the instants stored: 0001-01-01T00:00:00Z
// and 9999-12-31T23:59:59.999999Z, what Python's datetime (and so pyarrow
// and pyiceberg), Spark and Trino read.
var (
	minMicros = daysFromCivil(1, 1, 1) * 86400 * 1_000_000
	maxMicros = daysFromCivil(10000, 1, 1)*86400*1_000_000 - 1
)

func num2(b []byte) int { return int(b[0]-'0')*10 + int(b[1]-'0') }

func isLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

func daysIn(month, year int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days from 1970-01-01 to a date of the proleptic
// Gregorian calendar (Howard Hinnant's algorithm; year >= 0 here).
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := int64(month+9) % 12
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
