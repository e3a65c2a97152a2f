// Package registryio reads events' schemas from a Confluent-compatible
// schema registry (Apicurio Registry's /apis/ccompat/v7, Confluent's own,
// Redpanda's): it decodes Confluent's wire format (magic byte 0, a 4-byte
// big-endian schema id, then the JSON), resolves schema ids through the
// registry with a cache, and checks events against JSON Schemas.
//
// franz-go's pkg/sr is the registry client and gives the wire-format header;
// github.com/santhosh-tekuri/jsonschema/v6 compiles and checks the schemas.
//
// A registry that is away, or a schema id it does not know yet, never turns a
// good record into a dead letter: Resolver waits and retries for
// Config.Wait, then returns an error that fails the bundle, so the records
// are read again on restart. A record whose bytes are wrong (a short header,
// a schema that is not a JSON Schema, an event that violates its schema) is
// data: the caller dead-letters it with Violation's reason.
package registryio
