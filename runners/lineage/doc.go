// Package lineage emits OpenLineage run events (https://openlineage.io/spec)
// for HAADE's pipeline runs: START when a run starts, COMPLETE when it ends
// well, FAIL (with its error message, secrets redacted) when it fails, and
// ABORT when it is cancelled. Each event names the job (namespace "haade",
// the pipeline id), the run (a UUID shared by the events of one run), the
// input datasets (a Kafka topic, namespace kafka://host:port, or Iceberg
// tables) and the output tables, with their schema; COMPLETE adds the
// snapshots each output table got and their row counts (the standard
// outputStatistics facet and the custom haade_snapshots facet).
//
// Events go to the place --lineage names (Flag):
//
//   - file:///path/events.ndjson appends one JSON event per line;
//   - http(s)://host/api/v1/lineage POSTs each event, as Marquez and the
//     OpenLineage HTTP transport expect, with retries and backoff in the
//     background; Close waits for them for a bounded time (Timeout), then
//     gives up with a warning. An endpoint that cannot be reached never fails
//     the run.
//   - empty turns lineage off: every method is then a no-op.
//
// Only the process that launches a pipeline emits: the events are sent
// before and after the Beam job runs, never from a DoFn.
//
// A pipeline's main calls Open once, Start after it has built the pipeline,
// and Complete, Fail or Abort once the run ends; Tables describes Iceberg
// tables and finds the snapshots a run committed to them.
package lineage
