package registryio

import "errors"

// The errors of this package. Resolver's errors wrap one of them.
var (
	// ErrRegistry is returned when the registry stayed away, or kept
	// refusing, for longer than Config.Wait, or refused for good (401, 403):
	// the records are not lost, the bundle fails and they are read again.
	ErrRegistry = errors.New("schema registry unavailable")

	// ErrUnknownSchema is returned when the registry still did not know a
	// schema id (or the subject had no version) after Config.Wait. It wraps
	// ErrRegistry: the record may be fine, the registry is behind.
	ErrUnknownSchema = errors.New("schema id unknown to the registry")

	// ErrBadHeader is returned by DecodeWire for a value that starts with
	// the magic byte 0 but is shorter than the 5-byte header.
	ErrBadHeader = errors.New("wire-format header shorter than 5 bytes")

	// ErrNotJSONSchema is returned when a schema id names a schema of
	// another type (Avro, Protobuf), or one that does not compile: such a
	// record is a dead letter, not a reason to stop.
	ErrNotJSONSchema = errors.New("not a JSON Schema")
)
