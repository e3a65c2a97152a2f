package runners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/xlangx"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// Flink submission.
//
// Beam's Go SDK sends a fixed set of pipeline options to a job server
// (runner, app name, experiments, parallelism). Beam's Flink runner decides
// from an option the Go SDK cannot set whether its Impulse sources stay up:
// it keeps them up only when its own checkpointing_interval option is set
// (then shutdown_sources_after_idle_ms defaults to "never", else to 0).
// Checkpointing configured in the Flink configuration
// (execution.checkpointing.interval), the only way open to Go, does not
// count. An Impulse that finishes ends the input of the Kafka read's
// splittable DoFn; Flink then runs that operator's finish(), which processes
// the self-checkpoint timers of an unbounded read for ever, and no checkpoint
// can complete: each one expires and fails the job (seen on Beam 2.62 with
// Flink 1.19; testing/services/FLINK.md). The checkpoint interval, mode,
// storage and timeouts stay in the Flink configuration.
//
// So "flink" submits like Beam's universal runner, but adds
// shutdown_sources_after_idle_ms to the options: "never" for a pipeline that
// runs until it is stopped, 0 (Beam's default without checkpointing) for a
// bounded one, whose job must end when its reads end.

// FlinkOptions are the Beam Flink runner options that Run adds for
// --runner=flink.
type FlinkOptions struct {
	// Unbounded keeps the job's Impulse sources running, so that Flink can
	// checkpoint an unbounded read. A bounded run leaves it false: its job
	// then ends when the reads end.
	Unbounded bool
	// MaxBundleTime is Beam's max_bundle_time_mills; 0 leaves the job
	// server's default (1 s in streaming mode).
	MaxBundleTime time.Duration
	// NoStagedJars makes the job server stage none of its class path with
	// the job (Beam's pipelineResourcesDetectorFactoryClass, set to
	// testing/services/flink/haade/NoStagedJars.java), for a cluster that
	// has the jars already. Else a remote cluster gets the job server's
	// whole class path, about 150 MB, with every job.
	NoStagedJars bool
}

// noStagedJarsClass is the detector that NoStagedJars names; flink.sh
// builds it onto the job server's class path.
const noStagedJarsClass = "haade.NoStagedJars"

// options returns the extra pipeline options, keyed as Beam's portable
// runners expect: beam:option:<lower_underscore name>:v1.
func (o FlinkOptions) options() map[string]any {
	m := map[string]any{}
	if !o.Unbounded {
		// Beam's defaults: the Impulse finishes, and so does the job.
		m["beam:option:shutdown_sources_after_idle_ms:v1"] = "0"
	} else {
		// a string keeps all 64 bits; Jackson coerces it to a Long
		m["beam:option:shutdown_sources_after_idle_ms:v1"] = strconv.FormatInt(1<<63-1, 10)
		m["beam:option:streaming:v1"] = true
		m["beam:option:finish_bundle_before_checkpointing:v1"] = true
	}
	if o.NoStagedJars {
		m["beam:option:pipeline_resources_detector_factory_class:v1"] = noStagedJarsClass
	}
	if o.MaxBundleTime > 0 {
		m["beam:option:max_bundle_time_mills:v1"] = strconv.FormatInt(o.MaxBundleTime.Milliseconds(), 10)
	}
	return m
}

// flinkJobName is the Beam (and so the Flink) job name: --job_name, else
// the pipeline's stable name, so that a second submission finds the first.
func flinkJobName(opts Options) string {
	if *jobopts.JobName != "" {
		return *jobopts.JobName
	}
	if opts.Name != "" {
		return opts.Name
	}
	return jobopts.GetJobName()
}

// flinkParallelism is --parallelism when given, else opts.Parallelism (for
// example the partition count), else -1, the job server's default.
func flinkParallelism(opts Options) int {
	if *jobopts.Parallelism > 0 {
		return *jobopts.Parallelism
	}
	if opts.Parallelism > 0 {
		return opts.Parallelism
	}
	return -1
}

// runFlink does what Beam's universal runner does (universal.Execute and
// runnerlib.Execute, v2.77), with extra pipeline options in the Prepare
// request, and with Flink's REST API (--flink-rest) when known:
//
//   - a job of the same name that is active is left alone, and runFlink
//     returns at once without error (unless --replace: it is cancelled).
//     Without --flink-rest the job server's own list of jobs (GetJobs)
//     says whether it runs (see jobServerJobs);
//   - on a fixed cluster, a parallelism above its free slots is refused
//     before anything is submitted (the slot rule: flink_slots.go);
//   - --async returns once every task of the Flink job is RUNNING, and a
//     synchronous run logs when they are; a job whose tasks do not all run
//     within --async-wait is cancelled, and runFlink fails in one line that
//     names the cause (ErrNotRunning);
//   - cancelling ctx cancels the job on the job server and, through the
//     REST API, on Flink, and waits until Flink has stopped it.
func runFlink(ctx context.Context, p *beam.Pipeline, fo FlinkOptions, opts Options) (beam.PipelineResult, error) {
	if !beam.Initialized() {
		return nil, fmt.Errorf("%w: beam.Init() was not called before the pipeline was built", ErrRunner)
	}
	endpoint, err := jobopts.GetEndpoint()
	if err != nil {
		return nil, err
	}
	name := flinkJobName(opts)
	loopback := jobopts.IsLoopback()
	async := *jobopts.Async
	if async && loopback {
		return nil, fmt.Errorf("%w: --async with --environment_type=LOOPBACK: the worker runs in this process, which must then stay; use PROCESS or EXTERNAL", ErrRunner)
	}
	if *CancelFlag && *FlinkRESTFlag == "" {
		return nil, fmt.Errorf("%w: --cancel needs --flink-rest=http://JOBMANAGER:8081", ErrRunner)
	}
	capacity := opts.Cluster
	var (
		rest   *FlinkREST
		before = map[string]bool{}
	)
	if *FlinkRESTFlag != "" {
		if rest, err = NewFlinkREST(*FlinkRESTFlag); err != nil {
			return nil, err
		}
		if *CancelFlag {
			jobs, err := CancelFlinkJobs(ctx, rest.Base, name)
			if err != nil {
				return nil, fmt.Errorf("--cancel: %w", err)
			}
			slog.Info("--cancel: cancelled the running Flink jobs of this pipeline", "job", name, "cancelled", len(jobs), "flink_rest", rest.Base)
			return flinkResult{cancelled: len(jobs)}, nil
		}
		if !capacity.Known {
			// Before --replace cancels: the room counts the slots of the
			// jobs it replaces.
			capacity = FlinkRoom(ctx, rest, name, *ReplaceFlag)
		}
		jobs, err := rest.Jobs(ctx)
		if err != nil {
			return nil, fmt.Errorf("--flink-rest=%s: %w", rest.Base, err)
		}
		var running []FlinkJob
		for _, j := range jobs {
			if flinkJobIs(j.Name, name) {
				before[j.ID] = true
				if j.Active() {
					running = append(running, j)
				}
			}
		}
		if len(running) > 0 && !*ReplaceFlag {
			slog.Info("the Flink job already runs: not submitting a second one (--replace cancels it and submits)",
				"job", name, "flink_job", running[0].ID, "state", running[0].State, "flink_rest", rest.Base)
			return flinkResult{jobID: running[0].ID, alreadyRunning: true}, nil
		}
		for _, j := range running {
			slog.Info("--replace: cancelling the running Flink job", "job", name, "flink_job", j.ID)
			if err := rest.Cancel(ctx, j.ID, time.Minute); err != nil {
				return nil, fmt.Errorf("--replace: %w", err)
			}
		}
	}

	cc, err := grpcx.Dial(ctx, endpoint, 2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("connecting to job service %s: %w", endpoint, err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	if rest == nil {
		if r, done, err := submittedBefore(ctx, client, name, endpoint); done {
			return r, err
		}
	}

	parallelism := flinkParallelism(opts)
	if parallelism > 0 {
		if err := capacity.CheckSlots(parallelism); err != nil {
			return nil, err
		}
	}

	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	envURN := jobopts.GetEnvironmentUrn(ctx)
	getEnvCfg := jobopts.GetEnvironmentConfig
	if loopback {
		// The Go SDK harness runs in this process, on a port the kernel picks.
		srv, err := extworker.StartLoopback(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer srv.Stop(context.Background())
		getEnvCfg = srv.EnvironmentConfig
	}
	xlangx.ResolveArtifacts(ctx, edges, nil)
	env, err := graphx.CreateEnvironment(ctx, envURN, getEnvCfg)
	if err != nil {
		return nil, fmt.Errorf("generating model pipeline: %w", err)
	}
	pipe, err := graphx.Marshal(edges, &graphx.Options{Environment: env, PipelineResourceHints: jobopts.GetPipelineResourceHints()})
	if err != nil {
		return nil, fmt.Errorf("generating model pipeline: %w", err)
	}

	bin := *jobopts.WorkerBinary
	switch {
	case loopback:
		// The binary is unused; the environment still names one.
		f, err := os.CreateTemp("", "beamloopbackworker-*")
		if err != nil {
			return nil, err
		}
		f.Close()
		defer os.Remove(f.Name())
		bin = f.Name()
	case bin == "":
		worker, err := runnerlib.BuildTempWorkerBinary(ctx, runnerlib.CompileOpts{})
		if err != nil {
			return nil, err
		}
		defer os.Remove(worker)
		bin = worker
	}
	if err := runnerlib.UpdateGoEnvironmentWorker(bin, pipe); err != nil {
		return nil, err
	}

	opt := &runnerlib.JobOptions{
		Name:         name,
		Experiments:  jobopts.GetExperiments(),
		Worker:       *jobopts.WorkerBinary,
		RetainDocker: *jobopts.RetainDockerContainers,
		Parallelism:  parallelism,
		Loopback:     loopback,
	}
	prepID, artifacts, token, err := runnerlib.Prepare(ctx, extraOptionsClient{client, fo.options()}, pipe, opt)
	if err != nil {
		return nil, err
	}
	artifacts = reachableEndpoint(artifacts, endpoint)
	slog.Info("prepared Flink job", "job", name, "preparation", prepID, "parallelism", opt.Parallelism,
		"cluster", capacity.String(), "options", fo.options(), "artifact_endpoint", artifacts)
	retrieval, err := runnerlib.Stage(ctx, prepID, artifacts, bin, token)
	if err != nil {
		return nil, err
	}
	jobID, err := runnerlib.Submit(ctx, client, prepID, retrieval)
	if err != nil {
		return nil, err
	}
	slog.Info("submitted Flink job", "job", name, "job_id", jobID, "endpoint", endpoint)
	tw := taskWait{client: client, jobID: jobID, name: name, rest: rest, before: before, capacity: capacity, wait: *AsyncWaitFlag, bounded: !fo.Unbounded}

	if async {
		fj, err := tw.run(ctx)
		switch {
		case errors.Is(err, errJobEnded):
			slog.Info("--async: the Flink job has finished already; returning", "job", name, "job_id", jobID)
			return flinkResult{jobID: jobID}, nil
		case err != nil:
			cancelFlink(client, jobID, rest, name)
			return flinkResult{jobID: jobID}, err
		}
		if rest == nil {
			slog.Warn("--async: the job server says the job runs; without --flink-rest nobody checked that Flink's tasks got their slots", "job", name, "job_id", jobID)
		}
		slog.Info("--async: the Flink job runs, every task RUNNING; returning", "job", name, "job_id", jobID, "flink_job", fj.ID, "parallelism", fj.Parallelism())
		return flinkResult{jobID: jobID}, nil
	}

	// Cancelling ctx cancels the job, so that it does not outlive a
	// submitter whose loopback worker it needs.
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
		case <-ctx.Done():
			cancelFlink(client, jobID, rest, name)
		}
	}()
	waitCtx, stopWaiting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWaiting()
	finished := make(chan error, 1)
	go func() { finished <- runnerlib.WaitForCompletion(waitCtx, client, jobID) }()
	notRunning := make(chan error, 1)
	if rest != nil {
		go func() {
			fj, err := tw.run(waitCtx)
			switch {
			case err == nil:
				slog.Info("the Flink job runs, every task RUNNING", "job", name, "job_id", jobID, "flink_job", fj.ID, "parallelism", fj.Parallelism())
			case errors.Is(err, errJobEnded) || waitCtx.Err() != nil:
			default:
				notRunning <- err
			}
		}()
	}
	select {
	case err = <-finished:
	case err = <-notRunning:
		// Not a job that runs: cancel it rather than wait for ever.
		close(done)
		cancelFlink(client, jobID, rest, name)
		return flinkResult{jobID: jobID}, err
	case <-stopped:
		// Cancelled: the job server reports the end soon, or not at all
		// (its invocation of a remote job can outlive the Flink job).
		select {
		case err = <-finished:
		case <-time.After(30 * time.Second):
			stopWaiting()
		}
	}
	close(done)
	if ctx.Err() != nil {
		<-stopped // the cancel through Flink has finished
		if err == nil || waitCtx.Err() != nil {
			err = fmt.Errorf("job %s cancelled: %w", jobID, ctx.Err())
		}
	}
	return flinkResult{jobID: jobID}, err
}

// cancelFlink cancels the job on the job server and, when its REST API is
// known, on Flink, waiting until Flink reports it stopped.
func cancelFlink(client jobpb.JobServiceClient, jobID string, rest *FlinkREST, name string) {
	cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := client.Cancel(cctx, &jobpb.CancelJobRequest{JobId: jobID}); err != nil {
		slog.Warn("cancelling the job on the job server failed", "job_id", jobID, "err", err)
	}
	if rest == nil {
		slog.Warn("cancelled the job on the job server only; without --flink-rest the Flink job may keep running", "job_id", jobID)
		return
	}
	jobs, err := rest.ActiveJobs(cctx, name)
	for _, j := range jobs {
		if err = rest.Cancel(cctx, j.ID, time.Minute); err != nil {
			break
		}
		slog.Info("cancelled the Flink job", "job", name, "flink_job", j.ID)
	}
	if err != nil {
		slog.Error("cancelling the Flink job through its REST API failed", "job", name, "flink_rest", rest.Base, "err", err)
	}
}

// reachableEndpoint returns the artifact endpoint a job server advertised,
// with an unspecified host (0.0.0.0, ::, none: a job server started with
// --job-host=0.0.0.0) replaced by the host of the job endpoint we reached
// it at. Dialled as advertised, such an address is this host's own.
func reachableEndpoint(advertised, jobEndpoint string) string {
	host, port, err := net.SplitHostPort(advertised)
	if err != nil {
		return advertised
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return advertised
	}
	jobHost, _, err := net.SplitHostPort(jobEndpoint)
	if err != nil || jobHost == "" {
		return advertised
	}
	return net.JoinHostPort(jobHost, port)
}

// extraOptionsClient adds pipeline options to a job service's Prepare request.
type extraOptionsClient struct {
	jobpb.JobServiceClient
	extra map[string]any
}

func (c extraOptionsClient) Prepare(ctx context.Context, req *jobpb.PrepareJobRequest, opts ...grpc.CallOption) (*jobpb.PrepareJobResponse, error) {
	if req.PipelineOptions == nil {
		req.PipelineOptions = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	for k, v := range c.extra {
		pv, err := structpb.NewValue(v)
		if err != nil {
			return nil, fmt.Errorf("pipeline option %s: %w", k, err)
		}
		req.PipelineOptions.Fields[k] = pv
	}
	return c.JobServiceClient.Prepare(ctx, req, opts...)
}

// flinkResult is the result of a Flink submission.
type flinkResult struct {
	jobID string
	// alreadyRunning: a job of the same name ran, and nothing was submitted.
	alreadyRunning bool
	// cancelled: --cancel cancelled this many jobs, and nothing was submitted.
	cancelled int
}

// AlreadyRunning says whether a Flink submission found its job running and
// submitted nothing (see runFlink).
func AlreadyRunning(r beam.PipelineResult) bool {
	fr, ok := r.(flinkResult)
	return ok && fr.alreadyRunning
}

func (r flinkResult) Metrics() metrics.Results { return metrics.Results{} }
func (r flinkResult) JobID() string            { return r.jobID }
