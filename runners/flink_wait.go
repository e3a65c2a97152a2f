package runners

import (
	"context"
	"errors"
	"fmt"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
)

// ErrNotRunning is returned when a submitted Flink job did not get every
// task RUNNING within --async-wait, or ended first. Its message is one line
// that names the cause; ErrNoSlots is wrapped when slots were missing.
var ErrNotRunning = errors.New("the Flink job does not run")

// taskWait is one wait for a submitted job to run.
type taskWait struct {
	client jobpb.JobServiceClient
	// jobID is the job server's id of the job, name its Beam job name.
	jobID, name string
	// rest is Flink's REST API; nil: only the job server's state is known.
	rest *FlinkREST
	// before are the Flink jobs of this name that existed before the
	// submission: none of them is the one submitted.
	before map[string]bool
	// capacity is what the cluster had room for before the submission.
	capacity FlinkCapacity
	// wait is --async-wait; every is the time between two looks (1 s).
	wait, every time.Duration
	// bounded: the job ends when its reads do, and may run in batch mode,
	// one stage after another; it runs once it has Started.
	bounded bool
}

// errJobEnded says the job finished (a bounded job's end) while waited for:
// no error for a synchronous run, which then returns its result.
var errJobEnded = errors.New("the job ended")

// run waits until the job runs: with the REST API, its Flink job RUNNING
// with every task of every vertex RUNNING (a bounded job: Started);
// without, the job server's state RUNNING. It fails with ErrNotRunning, in one line that names the cause,
// when the job ends first or wait passes; with errJobEnded when it finished.
func (w taskWait) run(ctx context.Context) (FlinkJobDetail, error) {
	every := w.every
	if every <= 0 {
		every = time.Second
	}
	deadline := time.Now().Add(w.wait)
	var (
		last  FlinkJobDetail
		state jobpb.JobState_Enum
	)
	for {
		if st, err := w.client.GetState(ctx, &jobpb.GetJobStateRequest{JobId: w.jobID}); err == nil {
			state = st.GetState()
			switch state {
			case jobpb.JobState_DONE:
				return last, errJobEnded
			case jobpb.JobState_FAILED, jobpb.JobState_CANCELLED, jobpb.JobState_DRAINED:
				return last, w.ended(ctx, last, state.String())
			case jobpb.JobState_RUNNING:
				if w.rest == nil {
					return FlinkJobDetail{ID: w.jobID, Name: w.name, State: "RUNNING"}, nil
				}
			}
		}
		if w.rest != nil {
			if j, ok := w.flinkJob(ctx); ok {
				last = j
				switch {
				case j.AllRunning(), w.bounded && j.Started():
					return j, nil
				case j.State == "FINISHED":
					return j, errJobEnded
				case j.State == "FAILED" || j.State == "CANCELED":
					return j, w.ended(ctx, j, j.State)
				}
			}
		}
		if !time.Now().Before(deadline) {
			return last, w.timedOut(ctx, last, state)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(every):
		}
	}
}

// flinkJob finds the Flink job of this submission: named like the Beam
// job, not one of those before it, the latest started.
func (w taskWait) flinkJob(ctx context.Context) (FlinkJobDetail, bool) {
	jobs, err := w.rest.Jobs(ctx)
	if err != nil {
		return FlinkJobDetail{}, false
	}
	var found *FlinkJob
	for i, j := range jobs {
		if flinkJobIs(j.Name, w.name) && !w.before[j.ID] && (found == nil || j.Start > found.Start) {
			found = &jobs[i]
		}
	}
	if found == nil {
		return FlinkJobDetail{}, false
	}
	d, err := w.rest.Job(ctx, found.ID)
	if err != nil {
		return FlinkJobDetail{ID: found.ID, Name: found.Name, State: found.State}, true
	}
	return d, true
}

// ended is the error of a job that stopped before it ran.
func (w taskWait) ended(ctx context.Context, j FlinkJobDetail, state string) error {
	cause := ""
	if w.rest != nil && j.ID != "" {
		if c := w.rest.RootException(ctx, j.ID); c != "" {
			cause = ": " + c
		}
	}
	return fmt.Errorf("%w: job %s is %s before every task ran%s", ErrNotRunning, w.jobID, state, cause)
}

// timedOut is the error of a job whose tasks did not all run within
// --async-wait: one line that names what is missing.
func (w taskWait) timedOut(ctx context.Context, j FlinkJobDetail, state jobpb.JobState_Enum) error {
	after := fmt.Sprintf("after --async-wait=%v", w.wait)
	if w.rest == nil {
		return fmt.Errorf("%w: job %s is %v %s (the job server's state; --flink-rest tells more)", ErrNotRunning, w.jobID, state, after)
	}
	if j.ID == "" {
		return fmt.Errorf("%w: %s no Flink job %q at %s (the job server says %v): the submission is slow (staging?) or went to another cluster than --flink-rest",
			ErrNotRunning, after, w.name, w.rest.Base, state)
	}
	tasks, counts := j.TaskStates()
	if tasks == "" {
		tasks = "no tasks yet"
	}
	waiting := counts["SCHEDULED"]
	if !w.bounded {
		waiting += counts["CREATED"]
	}
	switch {
	case waiting > 0 && w.capacity.Elastic:
		now, _ := w.rest.Capacity(ctx)
		return fmt.Errorf("%w: %w: parallelism %d needs %d slots; %s the elastic cluster has %d TaskManagers, %d slots, and the TaskManagers it asked for did not start (see the Flink operator's events and the namespace's quota): tasks %s",
			ErrNotRunning, ErrNoSlots, j.Parallelism(), j.Parallelism(), after, now.TaskManagers, now.SlotsTotal, tasks)
	case waiting > 0:
		c := w.capacity
		if !c.Known {
			c, _ = w.rest.Capacity(ctx)
		}
		return fmt.Errorf("%w: %w: %s (%s, tasks %s)", ErrNotRunning, ErrNoSlots, c.slotsAdvice(j.Parallelism()), after, tasks)
	}
	msg := fmt.Sprintf("%s Flink job %s is %s with tasks %s: the workers are slow to start or failing (see the TaskManager logs), or raise --async-wait", after, j.ID, j.State, tasks)
	if cause := w.rest.RootException(ctx, j.ID); cause != "" {
		msg += "; last failure: " + cause
	}
	return fmt.Errorf("%w: %s", ErrNotRunning, msg)
}
