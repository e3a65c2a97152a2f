package runners

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
)

// Idempotent submission without --flink-rest. Beam's job server lists the
// jobs it runs (JobService.GetJobs: id, name, state), so a second
// submission of a running pipeline is found there. Beam's Flink job server
// names each job as Flink does (FlinkJobInvoker: the job name of the
// options, <name>-<user>-<MMddHHmmss>-<hex>; the id is that name, "_" and
// a UUID), so flinkJobIs matches both. The job server keeps that list in
// memory only: a restarted job server knows no job, and only Flink's REST
// API (--flink-rest) still sees the running one. The manifests keep
// --flink-rest for that reason.

// jobServerActive says whether a job server's state is one of a job that
// runs or will: every state but the terminal ones.
func jobServerActive(s jobpb.JobState_Enum) bool {
	switch s {
	case jobpb.JobState_UNSPECIFIED, jobpb.JobState_DONE, jobpb.JobState_FAILED,
		jobpb.JobState_CANCELLED, jobpb.JobState_DRAINED, jobpb.JobState_UPDATED:
		return false
	}
	return true
}

// activeJobServerJobs lists the active jobs of the Beam job called name
// that the job server knows.
func activeJobServerJobs(ctx context.Context, client jobpb.JobServiceClient, name string) ([]*jobpb.JobInfo, error) {
	resp, err := client.GetJobs(ctx, &jobpb.GetJobsRequest{})
	if err != nil {
		return nil, err
	}
	var out []*jobpb.JobInfo
	for _, j := range resp.GetJobInfo() {
		if jobServerActive(j.GetState()) && flinkJobIs(j.GetJobName(), name) {
			out = append(out, j)
		}
	}
	return out, nil
}

// submittedBefore asks the job server (without --flink-rest) whether a job
// of this name is active. done says the submission ends there: with the
// result of a job that already runs, or with the error of --replace, which
// cannot stop it without Flink's REST API. A job server that cannot list
// its jobs is logged and the submission goes on, as before.
func submittedBefore(ctx context.Context, client jobpb.JobServiceClient, name, endpoint string) (beam.PipelineResult, bool, error) {
	jobs, err := activeJobServerJobs(ctx, client, name)
	if err != nil {
		slog.Warn("the job server did not list its jobs: cannot tell whether this pipeline runs already (--flink-rest can)", "endpoint", endpoint, "err", err)
		return nil, false, nil
	}
	if len(jobs) == 0 {
		return nil, false, nil
	}
	j := jobs[0]
	if *ReplaceFlag {
		return nil, true, fmt.Errorf("%w: --replace: job %s (%s) runs on the job server at %s, and only Flink's REST API can stop it: pass --flink-rest=http://JOBMANAGER:8081",
			ErrRunner, j.GetJobId(), j.GetState(), endpoint)
	}
	slog.Info("the Flink job already runs (the job server says so): not submitting a second one (--replace with --flink-rest cancels it and submits)",
		"job", name, "job_id", j.GetJobId(), "state", j.GetState(), "endpoint", endpoint)
	return flinkResult{jobID: j.GetJobId(), alreadyRunning: true}, true, nil
}
