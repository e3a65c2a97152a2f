package runners

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/runners/lineage"
	"github.com/haade/haade/runners/obs"
)

// Common is the command line that every pipeline shares. A pipeline's
// Config embeds it, and its flags function fills it with CommonFlags.
type Common struct {
	// Runner is direct (Prism, in process), prism, flink or universal;
	// Endpoint the job server of flink and universal.
	Runner, Endpoint string
	// Pipeline is the stable pipeline id written into every snapshot
	// summary, and the Flink job's name.
	Pipeline string
	// MetricsAddr serves /metrics, /healthz and /readyz; empty: off.
	MetricsAddr string
	// LogFormat is text or json.
	LogFormat string
	// Lineage is where OpenLineage run events go (runners/lineage); empty: off.
	Lineage string
	// Bounded reads what exists at start, commits it, and exits.
	Bounded bool
	// Flink is what the Flink cluster had room for when the run started:
	// Main asks Flink's REST API (--runner=flink with --flink-rest) before
	// the first Build. Unknown otherwise. Not a flag.
	Flink FlinkCapacity
}

// setFlink sets c.Flink: Main reaches it through the Config that embeds c.
func (c *Common) setFlink(f FlinkCapacity) { c.Flink = f }

// FlinkParallelism is the parallelism of the Flink job of a pipeline whose
// input has n parts (bronze: the partitions): --parallelism when given,
// else n, capped on a fixed cluster by its free slots (the slot rule,
// flink_slots.go). why says which, for the log and the summary.
func (c Common) FlinkParallelism(n int) (p int, why string) {
	if *jobopts.Parallelism > 0 {
		return *jobopts.Parallelism, "--parallelism"
	}
	return c.Flink.DefaultParallelism(n)
}

// Shared returns c. Through it, every Config that embeds Common is a
// Commoner, which is what Main needs of it.
func (c Common) Shared() Common { return c }

// Commoner is a pipeline's Config: one that embeds Common.
type Commoner interface{ Shared() Common }

// Defaults are a pipeline's own defaults of the Common flags.
type Defaults struct {
	// Pipeline is --pipeline-id's default, usually the command's name.
	Pipeline string
	// MetricsAddr is --metrics-addr's default: DefaultMetricsAddr for a
	// streaming pipeline, empty (no server) for a batch one.
	MetricsAddr string
	// Bounded is the usage of --bounded. Empty: the pipeline has no
	// --bounded flag, and every run is bounded.
	Bounded string
}

// CommonFlags defines the Common flags on fs, with a pipeline's defaults:
// --runner, --endpoint, --pipeline-id, --metrics-addr, --log-format,
// --lineage and, when d.Bounded is set, --bounded. The function it returns
// checks them once fs is parsed; its errors name the flag.
func CommonFlags(fs *flag.FlagSet, d Defaults) func() (Common, error) {
	runner := String(fs, "runner", "direct", "direct (Prism, in process), prism, flink or universal")
	endpoint := String(fs, "endpoint", "", "job server HOST:PORT for flink and universal")
	pipeline := fs.String("pipeline-id", d.Pipeline, "stable pipeline id written into every snapshot summary")
	metrics := fs.String("metrics-addr", d.MetricsAddr, "address of /metrics, /healthz and /readyz (\":9102\" for every interface); empty turns them off")
	logFormat := fs.String("log-format", "text", "text or json")
	lineageURL := lineage.Flag(fs)
	bounded := new(bool)
	if d.Bounded != "" {
		fs.BoolVar(bounded, "bounded", false, d.Bounded)
	} else {
		*bounded = true
	}
	return func() (Common, error) {
		c := Common{Runner: runner(), Endpoint: endpoint(), Pipeline: *pipeline, MetricsAddr: *metrics,
			LogFormat: *logFormat, Lineage: lineageURL(), Bounded: *bounded}
		if err := Validate(c.Runner, c.Endpoint); err != nil {
			return c, err
		}
		if c.Pipeline == "" {
			return c, errors.New("--pipeline-id: empty")
		}
		if c.LogFormat != "text" && c.LogFormat != "json" {
			return c, fmt.Errorf("--log-format=%q: want text or json", c.LogFormat)
		}
		if _, err := lineage.ParseURL(c.Lineage); err != nil {
			return c, fmt.Errorf("--lineage: %v", err)
		}
		return c, nil
	}
}

// A Pipeline is one pipeline command: its own flags, and how it builds.
// Main owns everything else: the Common flags and HAADE_* environment
// (through the flags function, which calls CommonFlags), worker mode, the
// logs, the metrics server, lineage, signals, the run and the exit code.
type Pipeline[C Commoner] struct {
	// Name is the command's name, in its usage and at the start of every
	// error line.
	Name string
	// Flags defines the pipeline's flags, the Common ones included, on fs,
	// and returns the function that makes the Config once fs is parsed. An
	// error of that function names the flag.
	Flags func(fs *flag.FlagSet) func() (C, error)
	// Start, when set, runs once before the first Build: it may start what
	// the run needs (an embedded demo broker, which changes cfg) and check
	// that the servers are there. stop, when not nil, runs at exit. An error
	// exits with code 2, or the code given to Exit.
	Start func(ctx context.Context, cfg *C, stdout io.Writer) (stop func(), err error)
	// Lineage, when set, adds the datasets that the run reads and writes to
	// lin, whose job the harness has named (see runners/lineage).
	Lineage func(cfg C, lin *lineage.Command)
	// Build adds the pipeline's transforms to s. An error exits with code
	// 2, or the code given to Exit. It runs again when Job.Watch asks for it.
	Build func(ctx context.Context, s beam.Scope, cfg C) (Job, error)
	// Summary, when set, runs after a run that ended without error: it
	// prints what the run did to stdout. An error exits with code 1, or the
	// code given to Exit.
	Summary func(ctx context.Context, stdout io.Writer, cfg C, took time.Duration) error
}

// Job is what Build tells Main about the pipeline it built.
type Job struct {
	// Stoppable says that the pipeline's sources can stop early (Stop) and
	// the run then commits what it has read: the pipeline keeps its offsets
	// per window, so the next run resumes where this one stopped. Then the
	// first SIGINT or SIGTERM stops the sources and lets the run end. Not
	// stoppable: the first signal exits at once with code 130, with nothing
	// committed by the run in progress (a pipeline that commits all its work
	// at the end).
	Stoppable bool
	// Parallelism is the Flink job's parallelism when --parallelism is not
	// given, for example the number of Kafka partitions.
	Parallelism int
	// Describe are the attributes of the log line that says the run starts.
	Describe []any
	// Progress prints a progress line every 5 s on stderr (it always does
	// when stderr is a terminal).
	Progress bool
	// Watch, when set, runs while the pipeline runs (its context ends with
	// the run). Calling replan stops the sources; once the run has ended
	// Main calls Build again and runs the new pipeline: for a Kafka topic
	// that gained partitions.
	Watch func(ctx context.Context, replan func())
}

// Main runs the pipeline command p on the process's command line and
// environment, and exits with its code: 0 done, 1 the run failed, 2 a bad
// command line or configuration, 130 stopped by a signal.
func Main[C Commoner](p Pipeline[C]) {
	os.Exit(p.Run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Stop makes the sources of this process stop at their current positions,
// so the last windows commit and the pipeline's run returns normally: first
// the committers are told to make their last offsets durable, then the
// Kafka reads and the snapshot reads constructed until now stop. The io
// packages read that state from internal/stop, so the harness links only
// the io packages its pipeline uses. The tables' offsets say where the
// next run starts. Cancelling Prism's context instead crashes the process.
func Stop() { stop.Now() }

// exitError carries the exit code of an error that Main exits on.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// Exit makes err exit Main with code instead of its default.
func Exit(code int, err error) error {
	if err == nil {
		return nil
	}
	return exitError{code, err}
}

func exitCode(err error, def int) int {
	var e exitError
	if errors.As(err, &e) {
		return e.code
	}
	return def
}

// Run is Main without the process: it parses args and getenv, runs the
// pipeline, prints to stdout and stderr, and returns the exit code.
func (p Pipeline[C]) Run(args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	fs := NewFlagSet(p.Name)
	cfg, code, ok := parseCommand(fs, p.Name, args, getenv, stdout, stderr, absolutePaths(p.Flags), func() {
		if f := fs.Lookup("worker"); f != nil && f.Value.String() == "true" {
			startWorker(fs, stderr)
		}
		beam.Init() // in worker mode this runs Beam's harness and exits
	})
	if !ok {
		return code
	}
	common := cfg.Shared()
	_ = obs.SetupLogging(stderr, common.LogFormat)
	lin, err := p.openLineage(common, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --lineage: %v\n", p.Name, err)
		return 2
	}
	defer func() { lin.End(context.Background(), code) }()
	fail := func(err error, def int, what string) int {
		lin.Failed(err)
		fmt.Fprintf(stderr, "%s: %s%v\n", p.Name, what, err)
		return exitCode(err, def)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// runCtx is the job's: on Flink, cancelling it cancels the job.
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	var (
		signalled atomic.Bool
		stoppable atomic.Bool
	)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
		case <-ctx.Done():
			return // Run returned: this handler is done
		}
		signalled.Store(true)
		switch {
		case common.Runner == "flink":
			// The workers may run elsewhere (EXTERNAL), out of reach of
			// Stop, and an unbounded Flink job does not end when its
			// reads do: cancel the job. The tables hold the offsets, so the
			// next run re-reads whatever was not committed.
			slog.Info("stopping: cancelling the Flink job; the next run resumes from the tables' offsets")
			cancelRun()
		case stoppable.Load():
			slog.Info("stopping: reads end at their current offsets, the last windows commit")
			Stop()
		default:
			slog.Info("stopping: this run commits its work at the end, so it ends now with nothing committed; the next run does it again")
			lin.End(context.Background(), 130)
			os.Exit(130)
		}
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
		slog.Error("second signal: exiting now, without the commit in progress; the next run reads its records again from the tables' offsets, so nothing is lost or stored twice")
		os.Exit(130)
	}()
	if err := obs.Serve(ctx, common.MetricsAddr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return 2
	}
	if p.Start != nil {
		cleanup, err := p.Start(ctx, &cfg, stdout)
		if cleanup != nil {
			defer cleanup()
		}
		if err != nil {
			return fail(err, 2, "")
		}
		common = cfg.Shared()
		if lin.Emitter != nil {
			lin.Job.Streaming = !common.Bounded
		}
	}
	if p.Lineage != nil && lin.Emitter != nil {
		p.Lineage(cfg, lin)
	}

	if common.Runner == "flink" && *FlinkRESTFlag != "" && !*CancelFlag {
		if rest, err := NewFlinkREST(*FlinkRESTFlag); err == nil {
			room := FlinkRoom(ctx, rest, flinkJobName(Options{Name: common.Pipeline}), *ReplaceFlag)
			if s, ok := any(&cfg).(interface{ setFlink(FlinkCapacity) }); ok {
				s.setFlink(room)
			}
			common.Flink = room
		}
	}

	started := time.Now()
	progressOn := false
	for {
		pl, s := beam.NewPipelineWithRoot()
		job, err := p.Build(ctx, s, cfg)
		if err != nil {
			return fail(err, 2, "")
		}
		stoppable.Store(job.Stoppable)
		lin.Start(ctx)
		obs.SetReady(true)
		if !progressOn && (job.Progress || obs.IsTerminal(os.Stderr)) {
			progressOn = true
			go obs.Progress(ctx, stderr, 5*time.Second)
		}
		describe := append([]any{"pipeline", p.Name, "runner", common.Runner, "bounded", common.Bounded}, job.Describe...)
		parallelism := job.Parallelism
		if common.Runner == "flink" && job.Parallelism > 0 {
			var why string
			parallelism, why = common.FlinkParallelism(job.Parallelism)
			describe = append(describe, "flink_parallelism", parallelism, "flink_parallelism_from", why)
		}
		slog.Info("running", describe...)
		var replanned atomic.Bool
		watchCtx, stopWatch := context.WithCancel(ctx)
		if job.Watch != nil {
			go job.Watch(watchCtx, func() {
				replanned.Store(true)
				Stop()
			})
		}
		_, err = RunWith(runCtx, common.Runner, pl, Options{Unbounded: !common.Bounded, Name: common.Pipeline, Parallelism: parallelism, Cluster: common.Flink})
		stopWatch()
		if err != nil {
			if runCtx.Err() != nil {
				return fail(err, 130, "stopped: ")
			}
			return fail(err, 1, "run failed: ")
		}
		if !replanned.Load() || signalled.Load() {
			break
		}
		slog.Info("running again, planned anew", "pipeline", p.Name)
	}
	if p.Summary != nil {
		if err := p.Summary(ctx, stdout, cfg, time.Since(started)); err != nil {
			return fail(err, 1, "")
		}
	}
	return 0
}

// startWorker prepares a worker process of a remote runner (Flink
// EXTERNAL, PROCESS) before Beam's harness takes over: JSON logs, the boot
// copy removed, and its metrics served when --metrics-addr is set.
func startWorker(fs *flag.FlagSet, stderr io.Writer) {
	_ = obs.SetupLogging(stderr, "json")
	StartWorker()
	if f := fs.Lookup("metrics-addr"); f != nil && f.Value.String() != "" {
		if err := obs.Serve(context.Background(), f.Value.String()); err != nil {
			slog.Warn("worker metrics not served", "err", err)
		}
	}
}

// openLineage opens --lineage and names the run's job. --cancel stops a
// Flink job; it is not a run of its own, so it has no lineage.
func (p Pipeline[C]) openLineage(c Common, getenv func(string) string) (*lineage.Command, error) {
	if *CancelFlag {
		return &lineage.Command{}, nil
	}
	em, err := lineage.Open(c.Lineage, lineage.APIKey(getenv(lineage.EnvAPIKey)))
	if err != nil {
		return nil, err
	}
	return &lineage.Command{
		Emitter:  em,
		Job:      lineage.Job{Name: c.Pipeline, Streaming: !c.Bounded, Runner: c.Runner},
		Detached: isAsync(),
	}, nil
}

// isAsync reports Beam's --async: the Flink job runs on after the command
// exits.
func isAsync() bool {
	f := flag.Lookup("async")
	return f != nil && f.Value.String() == "true"
}
