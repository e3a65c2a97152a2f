// Package parse turns the value of one Kafka record on fintech.debt.raw into
// the fields of a bronze row, or into a dead-letter reason.
//
// The plain-Go core is [ParseEvent]: a strict, single-pass JSON scanner written
// for the bronze schema. It accepts exactly one JSON object (RFC 8259) with
// optional surrounding whitespace, and it classifies every other record by one
// of the Err* sentinels, whose short names ([Reason]) are used as metric labels
// and stored in the dead-letter table.
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
// A record that is not an event becomes a dead letter ([Row], [DeadLetterOf]):
// its topic, partition, offset, key, headers and bytes, and an error column
// "REASON: DETAIL". REASON is stable, one of [DeadLetterReasons] (the
// parser's [Reasons] and "tombstone"), and is what to group and count by;
// [SplitError] takes it apart. DETAIL says, for people, what was wrong.
//
// Nesting deeper than 10000 arrays and objects is rejected as a syntax error,
// the same limit as encoding/json.
package parse
