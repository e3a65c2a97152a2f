package event

// MalformedCase is one record value that must go to the dead-letter table,
// with the Reason that Parse gives it.
type MalformedCase struct {
	Name   string
	Value  []byte
	Reason string
}

// MalformedCases are record values that must end in the dead-letter table,
// one or more per rule. Pipeline tests produce them to Kafka; the tests of
// this package check each Reason. None is empty (an empty value is a
// tombstone to Kafka, which tests produce separately).
var MalformedCases = []MalformedCase{
	// Not JSON.
	{"missing closing brace", []byte(`{"source": "news", "title": "t", "timestamp": "2026-05-19T10:00:00Z"`), "syntax"},
	{"missing opening brace", []byte(`"source": "news", "timestamp": "2026-05-19T10:00:00Z"}`), "not_object"},
	{"raw newline in a string", []byte("{\"source\": \"news\", \"title\": \"line one\nline two\", \"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"raw tab in a string", []byte("{\"source\": \"news\\t\", \"title\": \"a\tb\", \"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"invalid escape \\q", []byte(`{"source": "ne\qws", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"short \\u escape", []byte(`{"title": "\u00e", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"invalid UTF-8 in a string", []byte("{\"title\": \"caf\xe9\", \"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"UTF-8 encoded surrogate", []byte("{\"title\": \"\xed\xa0\x80\", \"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"lone high surrogate escape", []byte(`{"title": "\ud83d", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"lone low surrogate escape", []byte(`{"title": "\ude00x", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"invalid UTF-8 in an extra member name", []byte("{\"\xff\": 1, \"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"leading zero in a number", []byte(`{"amount": 007, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"NaN", []byte(`{"amount": NaN, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"Infinity", []byte(`{"amount": -Infinity, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"number with a bare decimal point", []byte(`{"amount": 1., "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"number with a plus sign", []byte(`{"amount": +1, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"hex number", []byte(`{"amount": 0x1f, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"trailing comma in the object", []byte(`{"source": "news", "timestamp": "2026-05-19T10:00:00Z",}`), "syntax"},
	{"trailing comma in a nested array", []byte(`{"tags": [1, 2,], "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"missing comma", []byte(`{"source": "news" "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"missing colon", []byte(`{"source" "news", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"single quotes", []byte(`{'source': 'news', 'timestamp': '2026-05-19T10:00:00Z'}`), "syntax"},
	{"unquoted member name", []byte(`{source: "news", "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"line comment", []byte("{\"source\": \"news\", // the desk\n\"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"block comment", []byte(`{"source": "news", /* desk */ "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"misspelt literal", []byte(`{"flag": tru, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"capitalised literal", []byte(`{"flag": True, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"unclosed nested object", []byte(`{"meta": {"a": 1, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"mismatched brackets", []byte(`{"tags": [1, 2}, "timestamp": "2026-05-19T10:00:00Z"}`), "syntax"},
	{"byte order mark", []byte("\xef\xbb\xbf{\"timestamp\": \"2026-05-19T10:00:00Z\"}"), "syntax"},
	{"only whitespace", []byte(" \n\t "), "syntax"},
	{"plain text", []byte(`hello world`), "syntax"},
	{"truncated record", []byte(`{"source": "ne`), "syntax"},

	// Not one object.
	{"array", []byte(`[{"source": "news", "timestamp": "2026-05-19T10:00:00Z"}]`), "not_object"},
	{"string", []byte(`"2026-05-19T10:00:00Z"`), "not_object"},
	{"number", []byte(`42`), "not_object"},
	{"null", []byte(`null`), "not_object"},
	{"two concatenated objects", []byte(`{"timestamp": "2026-05-19T10:00:00Z"}{"timestamp": "2026-05-19T10:00:01Z"}`), "trailing_data"},
	{"two objects on two lines", []byte("{\"timestamp\": \"2026-05-19T10:00:00Z\"}\n{\"timestamp\": \"2026-05-19T10:00:01Z\"}\n"), "trailing_data"},
	{"trailing garbage", []byte(`{"timestamp": "2026-05-19T10:00:00Z"} xyz`), "trailing_data"},
	{"extra closing brace", []byte(`{"timestamp": "2026-05-19T10:00:00Z"}}`), "trailing_data"},
	{"trailing NUL byte", []byte("{\"timestamp\": \"2026-05-19T10:00:00Z\"}\x00"), "trailing_data"},

	// Wrong types.
	{"source is a number", []byte(`{"source": 7, "timestamp": "2026-05-19T10:00:00Z"}`), "wrong_type"},
	{"title is an object", []byte(`{"title": {"en": "Debt"}, "timestamp": "2026-05-19T10:00:00Z"}`), "wrong_type"},
	{"title is an array", []byte(`{"title": ["Debt"], "timestamp": "2026-05-19T10:00:00Z"}`), "wrong_type"},
	{"source is a boolean", []byte(`{"source": false, "timestamp": "2026-05-19T10:00:00Z"}`), "wrong_type"},
	{"timestamp is a number", []byte(`{"source": "news", "timestamp": 1779184800}`), "wrong_type"},

	// Timestamp missing or bad.
	{"no timestamp", []byte(`{"source": "news", "title": "Debt market update"}`), "missing_timestamp"},
	{"null timestamp", []byte(`{"source": "news", "timestamp": null}`), "missing_timestamp"},
	{"empty object", []byte(`{}`), "missing_timestamp"},
	{"timestamp in a nested object only", []byte(`{"meta": {"timestamp": "2026-05-19T10:00:00Z"}}`), "missing_timestamp"},
	{"timestamp with a space for T", []byte(`{"timestamp": "2026-05-19 10:00:00Z"}`), "bad_timestamp"},
	{"timestamp without a zone", []byte(`{"timestamp": "2026-05-19T10:00:00"}`), "bad_timestamp"},
	{"date only", []byte(`{"timestamp": "2026-05-19"}`), "bad_timestamp"},
	{"February 30th", []byte(`{"timestamp": "2026-02-30T10:00:00Z"}`), "bad_timestamp"},
	{"hour 24", []byte(`{"timestamp": "2026-05-19T24:00:00Z"}`), "bad_timestamp"},
	{"year 0 in UTC", []byte(`{"timestamp": "0000-01-01T00:00:00+00:01"}`), "bad_timestamp"},
	{"one-digit hour", []byte(`{"timestamp": "2026-05-19T1:00:00Z"}`), "bad_timestamp"},
	{"offset without a colon", []byte(`{"timestamp": "2026-05-19T10:00:00+0200"}`), "bad_timestamp"},
	{"offset +24:00", []byte(`{"timestamp": "2026-05-19T10:00:00+24:00"}`), "bad_timestamp"},
	{"lower-case z", []byte(`{"timestamp": "2026-05-19T10:00:00z"}`), "bad_timestamp"},
	{"Unix seconds as a string", []byte(`{"timestamp": "1779184800"}`), "bad_timestamp"},
	{"empty timestamp", []byte(`{"timestamp": ""}`), "bad_timestamp"},

	// Repeated names.
	{"timestamp twice", []byte(`{"timestamp": "2026-05-19T10:00:00Z", "timestamp": "2026-05-19T11:00:00Z"}`), "duplicate_member"},
	{"source twice, once escaped", []byte(`{"source": "a", "\u0073ource": "b", "timestamp": "2026-05-19T10:00:00Z"}`), "duplicate_member"},
	{"extra member twice", []byte(`{"desk": "a", "timestamp": "2026-05-19T10:00:00Z", "desk": "b"}`), "duplicate_member"},
	{"repeated name in a nested object", []byte(`{"meta": {"a": 1, "a": 2}, "timestamp": "2026-05-19T10:00:00Z"}`), "duplicate_member"},
}

// MalformedCorpus holds the values of MalformedCases.
var MalformedCorpus = func() [][]byte {
	out := make([][]byte, len(MalformedCases))
	for i, c := range MalformedCases {
		out[i] = c.Value
	}
	return out
}()

// ValidSamples are record values that Parse accepts: with extra
// members, nulls, escapes, offsets and fractions.
var ValidSamples = [][]byte{
	[]byte(`{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`),
	[]byte(`{"timestamp":"2026-05-19T12:30:00.123456789+02:00","source":"wire","title":null}`),
	[]byte(`{"source": null, "title": "Bond yields \u2191 \"sharply\"", "timestamp": "2026-05-19T04:15:00-05:30"}`),
	[]byte(`{"title": "Ratings", "timestamp": "2026-05-19T10:00:00.5Z", "amount": 1.25e6, "tags": ["debt", "eu"], "meta": {"desk": "rates", "urgent": true, "n": null}}`),
	[]byte("\n  {\"timestamp\" : \"1999-12-31T23:59:59.999999Z\" ,\n   \"source\" : \"\\ud83d\\udcb0 money\" }\n"),
	[]byte(`{"timestamp": "2026-05-19T10:00:00Z", "isin": "XS0000000000", "coupon": -0.0, "issuer": {"name": "Caf\u00e9 SA", "country": "FR"}}`),
}
