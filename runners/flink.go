package runners

import (
	"context"
	"fmt"
	"log/slog"
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
}

// options returns the extra pipeline options, keyed as Beam's portable
// runners expect: beam:option:<lower_underscore name>:v1.
func (o FlinkOptions) options() map[string]any {
	if !o.Unbounded {
		// Beam's defaults: the Impulse finishes, and so does the job.
		return map[string]any{"beam:option:shutdown_sources_after_idle_ms:v1": "0"}
	}
	return map[string]any{
		// a string keeps all 64 bits; Jackson coerces it to a Long
		"beam:option:shutdown_sources_after_idle_ms:v1":     strconv.FormatInt(1<<63-1, 10),
		"beam:option:streaming:v1":                          true,
		"beam:option:finish_bundle_before_checkpointing:v1": true,
	}
}

// runFlink does what Beam's universal runner does (universal.Execute and
// runnerlib.Execute, v2.77), with extra pipeline options in the Prepare
// request. Cancelling ctx cancels the job on the job server.
func runFlink(ctx context.Context, p *beam.Pipeline, fo FlinkOptions) (beam.PipelineResult, error) {
	if !beam.Initialized() {
		return nil, fmt.Errorf("%w: beam.Init() was not called before the pipeline was built", ErrRunner)
	}
	endpoint, err := jobopts.GetEndpoint()
	if err != nil {
		return nil, err
	}
	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	envURN := jobopts.GetEnvironmentUrn(ctx)
	getEnvCfg := jobopts.GetEnvironmentConfig
	loopback := jobopts.IsLoopback()
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

	cc, err := grpcx.Dial(ctx, endpoint, 2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("connecting to job service %s: %w", endpoint, err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	opt := &runnerlib.JobOptions{
		Name:         jobopts.GetJobName(),
		Experiments:  jobopts.GetExperiments(),
		Worker:       *jobopts.WorkerBinary,
		RetainDocker: *jobopts.RetainDockerContainers,
		Parallelism:  *jobopts.Parallelism,
		Loopback:     loopback,
	}
	prepID, artifacts, token, err := runnerlib.Prepare(ctx, extraOptionsClient{client, fo.options()}, pipe, opt)
	if err != nil {
		return nil, err
	}
	slog.Info("prepared Flink job", "preparation", prepID, "options", fo.options())
	retrieval, err := runnerlib.Stage(ctx, prepID, artifacts, bin, token)
	if err != nil {
		return nil, err
	}
	jobID, err := runnerlib.Submit(ctx, client, prepID, retrieval)
	if err != nil {
		return nil, err
	}
	slog.Info("submitted Flink job", "job", jobID, "endpoint", endpoint)

	// Cancelling ctx cancels the job, so that it does not outlive a
	// submitter whose loopback worker it needs.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := client.Cancel(cctx, &jobpb.CancelJobRequest{JobId: jobID}); err != nil {
				slog.Error("cancelling the Flink job failed", "job", jobID, "err", err)
			} else {
				slog.Info("cancelled the Flink job", "job", jobID)
			}
		}
	}()
	err = runnerlib.WaitForCompletion(context.WithoutCancel(ctx), client, jobID)
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("job %s cancelled: %w", jobID, ctx.Err())
	}
	return flinkResult{jobID: jobID}, err
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

type flinkResult struct{ jobID string }

func (r flinkResult) Metrics() metrics.Results { return metrics.Results{} }
func (r flinkResult) JobID() string            { return r.jobID }
