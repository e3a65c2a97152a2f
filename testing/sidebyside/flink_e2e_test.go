//go:build e2e

package main

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestFlinkContenderE2E runs the flink contender alone on a 100k-event
// backlog, on real Kafka, MinIO, PostgreSQL and the standalone Flink 1.19
// cluster (JobManager, two TaskManagers, Beam's job server in front; all
// started through testing/services, as the harness does): bronze
// --runner=flink --bounded with PROCESS workers must put every offset of the
// topic in its table exactly once (runOne checks the count and every
// (partition, offset)), exit on its own, and the Flink job must have
// FINISHED with a duration on the REST API. CPU and RSS must cover the
// JVMs: more than a Go process alone uses.
//
// Skipped when Flink is not installed (flinkcluster.sh install, which needs
// PyPI and Maven Central once).
//
//	go test -tags e2e -run TestFlinkContenderE2E ./testing/sidebyside/
func TestFlinkContenderE2E(t *testing.T) {
	root := flinkRoot(t, false)
	cfg, err := parseArgs([]string{"--events=100000", "--contenders=flink", "--repeat=1", "--timeout=8m",
		"--namespace=flinksbs_e2e", "--out=", "--chart="})
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
	t.Logf("flink: all %d rows after %.1f s (first after %.1f s), exit after %.1f s, Flink job %.1f s; %.1f CPU s, peak RSS %d MiB, %d snapshots",
		r.Rows, r.VisibleSeconds, r.FirstVisibleSeconds, r.ExitSeconds, r.FlinkJobSeconds, r.CPUSeconds, r.PeakRSSBytes>>20, r.Snapshots)
	if r.Contender != "flink" || r.Rows != 100_000 {
		t.Errorf("result %+v: want flink with 100000 rows", r)
	}
	if r.VisibleSeconds <= 0 || r.ExitSeconds < r.VisibleSeconds || r.FirstVisibleSeconds > r.VisibleSeconds {
		t.Errorf("first %.1f s, all %.1f s, exit %.1f s: want 0 < first <= all <= exit", r.FirstVisibleSeconds, r.VisibleSeconds, r.ExitSeconds)
	}
	if r.FlinkJobSeconds <= 0 || r.FlinkJobSeconds > r.ExitSeconds {
		t.Errorf("Flink job %.1f s, exit %.1f s: want the job's duration from the REST API, within the run", r.FlinkJobSeconds, r.ExitSeconds)
	}
	// The groups' Spread (Topic.Plan): each of the 8 partitions is read by a subtask of its
	// own (parallelism 8), not two by one and none by another.
	if want := []int{1, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(r.FlinkReadSubtasks, want) {
		t.Errorf("partitions read per subtask of the read stage = %v, want %v", r.FlinkReadSubtasks, want)
	}
	// Four JVMs at a few hundred MiB each, and the workers.
	if r.PeakRSSBytes < 1<<30 || r.CPUSeconds <= 0 {
		t.Errorf("peak RSS %d MiB, CPU %.1f s: want the JVMs' and the workers' (over 1 GiB)", r.PeakRSSBytes>>20, r.CPUSeconds)
	}
}
