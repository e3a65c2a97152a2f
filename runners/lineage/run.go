package lineage

import (
	"context"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Job names a pipeline for lineage.
type Job struct {
	// Namespace is the job namespace. Default Namespace ("haade").
	Namespace string
	// Name is the pipeline id (--pipeline-id), stable across runs.
	Name string
	// Streaming says the run has no planned end (jobType STREAMING);
	// otherwise it is BATCH.
	Streaming bool
	// Runner is the Beam runner (direct, prism, flink), for the
	// processing_engine facet. Default: no such facet.
	Runner string
}

// Run is one run of a job: the events of one run share its id. Its methods
// are safe on a nil Run, which an emitter that is off returns.
type Run struct {
	e       *Emitter
	id      string
	job     JobRef
	facets  map[string]any
	inputs  []InputDataset
	outputs []OutputDataset

	mu    sync.Mutex
	ended bool
	now   func() time.Time
}

// Start emits START for a new run of job, reading inputs and writing
// outputs, and returns the run. On a nil or off emitter it returns nil.
func (e *Emitter) Start(ctx context.Context, job Job, inputs []InputDataset, outputs []OutputDataset) *Run {
	if e == nil || e.send == nil {
		return nil
	}
	r := &Run{e: e, id: newRunID(), inputs: inputs, outputs: outputs, now: time.Now}
	r.job = JobRef{Namespace: job.Namespace, Name: job.Name, Facets: map[string]any{"jobType": jobTypeFacet(job.Streaming)}}
	if r.job.Namespace == "" {
		r.job.Namespace = Namespace
	}
	if job.Runner != "" {
		r.facets = map[string]any{"processing_engine": ProcessingEngine{Base: base(processingEngineFacetURL),
			Name: "Apache Beam Go SDK (" + job.Runner + ")", Version: beamVersion()}}
	}
	r.emit(Start, nil, outputs)
	return r
}

func jobTypeFacet(streaming bool) JobType {
	pt := "BATCH"
	if streaming {
		pt = "STREAMING"
	}
	return JobType{Base: base(jobTypeFacetURL), ProcessingType: pt, Integration: "HAADE", JobType: "JOB"}
}

// ID is the run id, a UUID ("" for a nil run).
func (r *Run) ID() string {
	if r == nil {
		return ""
	}
	return r.id
}

// Running emits RUNNING: the run goes on without this process (a Flink job
// submitted with --async), so no COMPLETE will follow from here.
func (r *Run) Running(ctx context.Context) {
	if r == nil {
		return
	}
	r.emit(Running, nil, r.outputs)
}

// Complete emits COMPLETE. outputs replaces the outputs of START when not
// nil: Tables.Committed gives them with the snapshots and row counts the
// run committed. Only the first of Complete, Fail and Abort emits.
func (r *Run) Complete(ctx context.Context, outputs []OutputDataset) {
	if r == nil || !r.end() {
		return
	}
	if outputs == nil {
		outputs = r.outputs
	}
	r.emit(Complete, nil, outputs)
}

// Fail emits FAIL with err's message, secrets redacted (Redact), in the
// errorMessage facet. outputs are as for Complete: a failed run may have
// committed some snapshots before it failed.
func (r *Run) Fail(ctx context.Context, err error, outputs []OutputDataset) {
	if r == nil || !r.end() {
		return
	}
	msg := "failed"
	if err != nil {
		msg = Redact(err.Error())
	}
	if outputs == nil {
		outputs = r.outputs
	}
	r.emit(Fail, map[string]any{"errorMessage": ErrorMessage{Base: base(errorMessageFacetURL), Message: msg, ProgrammingLanguage: "GO"}}, outputs)
}

// Abort emits ABORT: the run was cancelled (a Flink job cancelled on
// SIGTERM) rather than finished or failed.
func (r *Run) Abort(ctx context.Context, outputs []OutputDataset) {
	if r == nil || !r.end() {
		return
	}
	if outputs == nil {
		outputs = r.outputs
	}
	r.emit(Abort, nil, outputs)
}

func (r *Run) end() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	r.ended = true
	return true
}

func (r *Run) emit(t EventType, runFacets map[string]any, outputs []OutputDataset) {
	facets := map[string]any{}
	for k, v := range r.facets {
		facets[k] = v
	}
	for k, v := range runFacets {
		facets[k] = v
	}
	if len(facets) == 0 {
		facets = nil
	}
	r.e.emit(RunEvent{EventType: t, EventTime: eventTime(r.now()), Run: RunRef{RunID: r.id, Facets: facets}, Job: r.job,
		Inputs: r.inputs, Outputs: outputs, Producer: Producer, SchemaURL: SchemaURL})
}

// newRunID returns a UUIDv7, as OpenLineage recommends (time-ordered).
func newRunID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// beamVersion is the Beam Go SDK version linked into the binary.
func beamVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/apache/beam/sdks/v2" {
				return d.Version
			}
		}
	}
	return "unknown"
}
