// Package runners selects the Beam runner a pipeline runs on and parses the
// command line shared by every HAADE pipeline.
//
// "direct" runs the pipeline in process on Prism: Beam's own direct runner
// cannot run splittable DoFns with watermark estimators (docs/DESIGN.md, "Runners"), and
// testing/ptest already registers the name "direct", so the mapping is done
// here, at flag level, rather than by registering a second runner.
package runners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"     // registers "flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"     // registers "prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal" // registers "universal"
	"github.com/haade/haade/internal/stop"
)

// ErrRunner is returned for an unknown runner or a runner without the
// endpoint it needs.
var ErrRunner = errors.New("runners: bad runner")

// Names lists the runners a pipeline accepts.
var Names = []string{"direct", "prism", "flink", "universal"}

// Validate checks a runner name and the endpoint it needs.
func Validate(runner, endpoint string) error {
	switch runner {
	case "direct", "prism":
		return nil
	case "flink", "universal":
		if endpoint == "" {
			return fmt.Errorf("%w: --runner=%s needs --endpoint=HOST:PORT of a Beam job server", ErrRunner, runner)
		}
		return nil
	}
	return fmt.Errorf("%w: --runner=%q: want one of %s", ErrRunner, runner, strings.Join(Names, ", "))
}

// beamName maps our runner names to Beam's registered ones.
func beamName(runner string) string {
	if runner == "direct" {
		return "prism"
	}
	return runner
}

// Options say how to submit a pipeline.
type Options struct {
	// Unbounded says that the pipeline runs until it is stopped. On Flink
	// it keeps the job's sources running so that checkpoints can complete
	// (see FlinkOptions); elsewhere it changes nothing.
	Unbounded bool
	// Name is the pipeline's stable name (bronze's --pipeline-id). On Flink
	// it is the job name unless --job_name is given, and submission looks
	// for a running job of that name (--flink-rest). Empty: Beam's generated
	// go-job-N-TIME.
	Name string
	// Parallelism is the Flink job's parallelism when --parallelism is not
	// given, for example the number of Kafka partitions (Main passes it
	// capped: Common.FlinkParallelism). 0: the job server's default
	// (parallelism.default of its Flink configuration).
	Parallelism int
	// Cluster is what the Flink cluster had room for (FlinkRoom); unknown:
	// runFlink asks its REST API itself when --flink-rest is given.
	Cluster FlinkCapacity
}

// Run runs p on the runner and waits for it to finish.
func Run(ctx context.Context, runner string, p *beam.Pipeline) (beam.PipelineResult, error) {
	return RunWith(ctx, runner, p, Options{})
}

// RunWith runs p on the runner with opts and waits for it to finish.
//
// On Flink (runFlink): with --async it returns once the job runs (with
// --flink-rest: every task RUNNING); it submits nothing when a job of the
// same name runs (AlreadyRunning tells; Flink's REST API says so, else the
// job server's list of jobs); and with --flink-rest cancelling ctx cancels
// the Flink job through Flink's REST API, returning once Flink has stopped
// it. Without --flink-rest, cancelling ctx cancels the job on the job
// server only.
func RunWith(ctx context.Context, runner string, p *beam.Pipeline, opts Options) (beam.PipelineResult, error) {
	if runner == "flink" {
		return runFlink(ctx, p, FlinkOptions{Unbounded: opts.Unbounded, MaxBundleTime: *MaxBundleTimeFlag, NoStagedJars: *FlinkClusterClasspathFlag}, opts)
	}
	defer privateTemp()()
	res, err := beam.Run(ctx, beamName(runner), p)
	if err == nil {
		// The run's sinks make durable what they had not yet recorded
		// (internal/stop.AtEnd), if a clean stop ended it. Nothing is lost
		// if they cannot: the next run reads again from the offsets the
		// tables recorded, and the tables skip what they hold.
		if err := stop.End(ctx); err != nil {
			slog.Warn("the offsets of the last windows without rows were not recorded; the next run reads them again", "err", err)
		}
	}
	return res, err
}
