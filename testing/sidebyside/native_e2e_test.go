//go:build e2e

package main

import (
	"context"
	"testing"
	"time"
)

// TestNativeContenderE2E runs the native contender alone on a 100k-event
// backlog, on real Kafka, MinIO, PostgreSQL and the standalone Flink 1.19
// cluster that the flink contender uses (started through testing/services
// with Iceberg's jars on its class path, as the harness does): Flink SQL
// through Flink's SQL client, Iceberg's own Flink sink into a table of
// bronze's schema. Every offset of the topic must be in the table exactly
// once (runOne checks the count and every (partition, offset), through the
// same reader as bronze's table), the first rows must come before the
// last (a commit per checkpoint), and the streaming Flink job must have
// been CANCELED by the harness once every row was visible, with a duration
// on the REST API. CPU and RSS must cover the SQL client's and the
// cluster's JVMs.
//
// Skipped when Flink or Iceberg's Flink jars are not installed
// (flinkcluster.sh install, flinknative.sh install: PyPI and Maven Central
// once).
//
//	go test -tags e2e -run TestNativeContenderE2E ./testing/sidebyside/
func TestNativeContenderE2E(t *testing.T) {
	root := flinkRoot(t, true)
	cfg, err := parseArgs([]string{"--events=100000", "--contenders=native", "--repeat=1", "--timeout=8m",
		"--namespace=nativesbs_e2e", "--out=", "--chart="})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rep, err := measure(ctx, cfg, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	r := rep.Results[0]
	t.Logf("native: all %d rows after %.1f s (first after %.1f s), Flink job %.1f s until cancelled; %.1f CPU s, peak RSS %d MiB, %d snapshots",
		r.Rows, r.VisibleSeconds, r.FirstVisibleSeconds, r.FlinkJobSeconds, r.CPUSeconds, r.PeakRSSBytes>>20, r.Snapshots)
	if r.Contender != "native" || r.Rows != 100_000 {
		t.Errorf("result %+v: want native with 100000 rows", r)
	}
	if r.VisibleSeconds <= 0 || r.FirstVisibleSeconds <= 0 || r.FirstVisibleSeconds > r.VisibleSeconds {
		t.Errorf("first %.1f s, all %.1f s: want 0 < first <= all", r.FirstVisibleSeconds, r.VisibleSeconds)
	}
	// The harness stopped the streaming job by cancelling it.
	if r.FlinkJobState != "CANCELED" {
		t.Errorf("Flink job state %q on the REST API, want CANCELED", r.FlinkJobState)
	}
	if r.FlinkJobSeconds <= 0 {
		t.Errorf("Flink job %.1f s: want the cancelled job's duration from the REST API", r.FlinkJobSeconds)
	}
	if r.Snapshots < 1 {
		t.Errorf("%d snapshots: want Iceberg's commits", r.Snapshots)
	}
	// The SQL client's JVM and three cluster JVMs at a few hundred MiB each.
	if r.PeakRSSBytes < 1<<30 || r.CPUSeconds <= 0 {
		t.Errorf("peak RSS %d MiB, CPU %.1f s: want the SQL client's and the cluster's JVMs' (over 1 GiB)", r.PeakRSSBytes>>20, r.CPUSeconds)
	}
}
