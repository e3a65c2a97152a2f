// Package faults is a fault-injection suite that a user can run against the
// real servers: it replays classes of failure and bad input on bronze
// (PostgreSQL, MinIO and Kafka killed mid-stream, SIGTERM during a slow
// commit, kill -9 right after a commit, two processes with one pipeline id,
// two pipeline ids on one table, huge and malformed records, a full disk,
// a second SIGTERM while a commit retries, partitions added while running,
// a recreated topic, another engine's snapshot expiry) and prints a table:
// case, outcome, records produced, lost and duplicated, counted by
// (partition, offset) over the bronze and dead-letter tables.
//
//	go test -tags faults -count=1 -timeout 40m ./testing/faults/
//	go test -tags faults -count=1 -run 'TestFaults/kill9' ./testing/faults/
//
// It starts PostgreSQL, MinIO and Kafka through testing/services (and
// stops what it started unless HAADE_KEEP_SERVICES is set), and writes the
// table to $HAADE_FAULTS_TABLE too when that is set. The full-disk case
// mounts a small tmpfs, so it needs root; without, it is reported as
// skipped. A FAIL row is a finding, not a flaky test: the suite fails.
package faults
