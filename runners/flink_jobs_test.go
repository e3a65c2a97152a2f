package runners

import (
	"context"
	"strings"
	"testing"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSubmittedBeforeAsksTheJobServer(t *testing.T) {
	ctx := context.Background()
	js := &fakeJobService{jobs: []*jobpb.JobInfo{
		{JobId: "bronze-root-1206023000-1a2b3c_0f1e", JobName: "bronze-root-1206023000-1a2b3c", State: jobpb.JobState_CANCELLED},
		{JobId: "bronze-root-1206023500-9a_77aa", JobName: "bronze-root-1206023500-9a", State: jobpb.JobState_RUNNING},
		{JobId: "silver-root-1206023500-9a_1", JobName: "silver-root-1206023500-9a", State: jobpb.JobState_RUNNING},
	}}
	r, done, err := submittedBefore(ctx, js, "bronze", "127.0.0.1:8099")
	if err != nil || !done || !AlreadyRunning(r) || r.JobID() != "bronze-root-1206023500-9a_77aa" {
		t.Errorf("a running bronze job: %v, %v, %v; want it found, and nothing submitted", r, done, err)
	}
	if _, done, err := submittedBefore(ctx, js, "gold", "127.0.0.1:8099"); done || err != nil {
		t.Errorf("no gold job: done %v, %v; want a submission", done, err)
	}
	*ReplaceFlag = true
	t.Cleanup(func() { *ReplaceFlag = false })
	if _, done, err := submittedBefore(ctx, js, "bronze", "127.0.0.1:8099"); !done || err == nil || !strings.Contains(err.Error(), "--flink-rest") {
		t.Errorf("--replace without --flink-rest while bronze runs: done %v, %v; want a refusal naming --flink-rest", done, err)
	}
}

func TestJobServerActive(t *testing.T) {
	var active []string
	for s := range jobpb.JobState_Enum_name {
		if jobServerActive(jobpb.JobState_Enum(s)) {
			active = append(active, jobpb.JobState_Enum(s).String())
		}
	}
	want := []string{"CANCELLING", "DRAINING", "RUNNING", "STARTING", "STOPPED", "UPDATING"}
	if diff := cmp.Diff(want, active, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("active job server states (-want +got):\n%s", diff)
	}
}
