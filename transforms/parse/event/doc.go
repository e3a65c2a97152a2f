// Package event parses the value of one Kafka record on fintech.debt.raw
// into the fields of a bronze row ([Parse], [Fields]), or says why it is not
// an event: every error wraps one of the Err* sentinels, whose short names
// ([Reason], [Reasons]) are metric labels and the reasons of the dead-letter
// table.
//
// [Parse] is a strict, single-pass JSON scanner written for the bronze
// schema. It accepts exactly one JSON object (RFC 8259) with optional
// surrounding whitespace, and it classifies every other record by one of
// the sentinels.
//
// Strictness beyond encoding/json, all of it deliberate:
//   - invalid UTF-8 anywhere in the record is a syntax error (encoding/json
//     silently replaces it with U+FFFD);
//   - lone or mismatched UTF-16 surrogate escapes ("\ud800", "\udc00",
//     "\ud800\u0041") are a syntax error: they cannot be stored as valid UTF-8,
//     and replacing them would change the data (encoding/json replaces them
//     with U+FFFD; encoding/json/v2 rejects them as we do);
//   - a member name repeated in any object, at the top level or nested inside
//     an extra member, is ErrDuplicateMember (names are compared after their
//     escapes are decoded, so "\u0073ource" repeats "source");
//   - timestamps must be RFC 3339 as accepted by the RFC 3339 fast path of
//     time.Parse; the forms only its lenient fallback accepts (a one-digit hour,
//     a comma before the fraction, an offset of +24:00 or with minute 60) are
//     not RFC 3339 and are rejected with ErrBadTimestamp.
//
// Nesting deeper than 10000 arrays and objects is rejected as a syntax error,
// the same limit as encoding/json.
//
// [MalformedCases] and [ValidSamples] are the records the tests of this
// package and of the pipelines send through the parser, by rule.
//
// The package imports only the standard library, and must keep to it: CI
// fuzzes it (FuzzParse), and go test -fuzz instruments every package the
// test binary links, so each dependency added here is compiled again,
// instrumented, on every CI run (testing/layout's TestEventParserIsPlainGo).
// What turns a record into a bronze row or a dead letter, with its Kafka
// columns, is transforms/parse.
package event
