package runners

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// What a Flink cluster has room for, and whether a job got it, from Flink's
// REST API (--flink-rest). Beam's job server reports a job RUNNING as soon
// as Flink accepted it, while every task may wait for slots for ever (a
// job of parallelism 8 on a cluster of 4 slots: all 49 tasks SCHEDULED).
//
// The slot rule. A Beam job on Flink keeps every operator in one slot
// sharing group, so a job of parallelism P needs P slots. Two kinds of
// cluster:
//
//   - fixed (standalone, or the operator's standalone mode): its
//     TaskManagers are the ones registered, and its room is GET /overview's
//     slots-available. The default parallelism is the smaller of the
//     partition count and that; a --parallelism above it is refused before
//     anything is submitted.
//   - elastic: the JobManager runs Flink's native Kubernetes (or YARN)
//     resource manager, which starts TaskManagers when a job asks for slots,
//     so 0 free slots at submit time is normal. Told apart by GET
//     /jobmanager/config: execution.target is kubernetes-session or
//     kubernetes-application (what the Flink operator's native mode sets),
//     or yarn-*. Nothing is capped or refused up front; the submitter waits
//     for every task to run, up to --async-wait.

// FlinkCapacity is what a Flink cluster had room for when it was asked.
type FlinkCapacity struct {
	// Known: the REST API answered. The zero FlinkCapacity is unknown, and
	// caps nothing.
	Known bool
	// Elastic: the cluster starts TaskManagers on demand (see the slot rule).
	Elastic bool
	// Target is the JobManager's execution.target ("" when unset, as on a
	// standalone cluster started by its scripts).
	Target string
	// TaskManagers, SlotsTotal and SlotsFree are GET /overview's
	// taskmanagers, slots-total and slots-available.
	TaskManagers, SlotsTotal, SlotsFree int
}

// Fixed says the cluster's room is its free slots: known and not elastic.
func (c FlinkCapacity) Fixed() bool { return c.Known && !c.Elastic }

// String says what the cluster has, for messages.
func (c FlinkCapacity) String() string {
	if !c.Known {
		return "a cluster of unknown size"
	}
	kind := "a standalone cluster"
	if c.Elastic {
		kind = "an elastic cluster (execution.target " + c.Target + ")"
	}
	return fmt.Sprintf("%s of %d TaskManagers, %d slots, %d free", kind, c.TaskManagers, c.SlotsTotal, c.SlotsFree)
}

// elasticTarget says whether execution.target names a resource manager
// that starts TaskManagers on demand.
func elasticTarget(target string) bool {
	return strings.HasPrefix(target, "kubernetes-") || strings.HasPrefix(target, "yarn-")
}

// Capacity asks the cluster what it has room for: GET /overview, then GET
// /jobmanager/config for execution.target.
func (r *FlinkREST) Capacity(ctx context.Context) (FlinkCapacity, error) {
	var ov struct {
		TaskManagers int `json:"taskmanagers"`
		SlotsTotal   int `json:"slots-total"`
		SlotsFree    int `json:"slots-available"`
	}
	if err := r.do(ctx, "GET", "/overview", &ov); err != nil {
		return FlinkCapacity{}, err
	}
	var conf []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if err := r.do(ctx, "GET", "/jobmanager/config", &conf); err != nil {
		return FlinkCapacity{}, err
	}
	c := FlinkCapacity{Known: true, TaskManagers: ov.TaskManagers, SlotsTotal: ov.SlotsTotal, SlotsFree: ov.SlotsFree}
	for _, kv := range conf {
		if kv.Key == "execution.target" {
			c.Target = kv.Value
		}
	}
	c.Elastic = elasticTarget(c.Target)
	return c, nil
}

// ErrNoSlots is returned when a Flink job cannot get the slots it needs:
// before submission on a fixed cluster, or when its tasks did not all run
// within --async-wait.
var ErrNoSlots = errors.New("not enough Flink slots")

// CheckSlots refuses, on a fixed cluster, a parallelism the cluster has no
// free slots for, in one line that names --parallelism. An elastic or
// unknown cluster refuses nothing.
func (c FlinkCapacity) CheckSlots(parallelism int) error {
	if !c.Fixed() || parallelism <= c.SlotsFree {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoSlots, c.slotsAdvice(parallelism))
}

// slotsAdvice is the one line that says why parallelism does not fit.
func (c FlinkCapacity) slotsAdvice(parallelism int) string {
	if c.SlotsFree > 0 {
		return fmt.Sprintf("parallelism %d needs %d slots, the cluster has %d free (%d in all, %d TaskManagers): pass --parallelism=%d or add TaskManagers",
			parallelism, parallelism, c.SlotsFree, c.SlotsTotal, c.TaskManagers, c.SlotsFree)
	}
	return fmt.Sprintf("parallelism %d needs %d slots, the cluster has 0 free (%d in all, %d TaskManagers): stop another job or add TaskManagers",
		parallelism, parallelism, c.SlotsTotal, c.TaskManagers)
}

// DefaultParallelism is the parallelism of a job whose input has n parts
// (bronze: the partitions) when --parallelism is not given: n, or, on a
// fixed cluster, the smaller of n and its free slots (at least 1). why says
// which, for the run's log and summary.
func (c FlinkCapacity) DefaultParallelism(n int) (p int, why string) {
	if !c.Fixed() || n <= c.SlotsFree {
		return n, fmt.Sprintf("the partition count (%s)", c.whyNotCapped())
	}
	if c.SlotsFree < 1 {
		return n, fmt.Sprintf("the partition count; the cluster has 0 free slots of %d", c.SlotsTotal)
	}
	return c.SlotsFree, fmt.Sprintf("the cluster's %d free slots, fewer than the %d partitions", c.SlotsFree, n)
}

func (c FlinkCapacity) whyNotCapped() string {
	switch {
	case !c.Known:
		return "cluster size unknown without --flink-rest"
	case c.Elastic:
		return "an elastic cluster starts TaskManagers for it"
	}
	return fmt.Sprintf("the cluster has %d free slots", c.SlotsFree)
}

// FlinkVertex is one vertex of GET /jobs/:id: an operator chain and its
// subtasks, counted by state in Tasks.
type FlinkVertex struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Parallelism int            `json:"parallelism"`
	Status      string         `json:"status"`
	Tasks       map[string]int `json:"tasks"`
}

// Running says every subtask of the vertex runs (or, for a source that
// has nothing more to read, has finished).
func (v FlinkVertex) Running() bool {
	return v.Parallelism > 0 && v.Tasks["RUNNING"]+v.Tasks["FINISHED"] == v.Parallelism
}

// FlinkJobDetail is GET /jobs/:id.
type FlinkJobDetail struct {
	ID       string        `json:"jid"`
	Name     string        `json:"name"`
	State    string        `json:"state"`
	Vertices []FlinkVertex `json:"vertices"`
}

// Job reads one job's vertices and their tasks.
func (r *FlinkREST) Job(ctx context.Context, id string) (FlinkJobDetail, error) {
	var j FlinkJobDetail
	err := r.do(ctx, "GET", "/jobs/"+url.PathEscape(id), &j)
	return j, err
}

// AllRunning says the job is RUNNING with every task of every vertex
// RUNNING: the only state in which it reads.
func (j FlinkJobDetail) AllRunning() bool {
	if j.State != "RUNNING" || len(j.Vertices) == 0 {
		return false
	}
	for _, v := range j.Vertices {
		if !v.Running() {
			return false
		}
	}
	return true
}

// Started says a bounded job runs: RUNNING, some task RUNNING, and none
// waiting for a slot or starting (SCHEDULED, DEPLOYING, INITIALIZING). A
// job translated in batch mode (a bounded pipeline) runs its stages one
// after another, so tasks CREATED there wait for their inputs, not for
// slots, and the job never has every task RUNNING at once.
func (j FlinkJobDetail) Started() bool {
	if j.State != "RUNNING" {
		return false
	}
	_, n := j.TaskStates()
	return n["RUNNING"] > 0 && n["SCHEDULED"]+n["DEPLOYING"]+n["INITIALIZING"] == 0
}

// Parallelism is the largest parallelism of its vertices: the slots the job
// needs.
func (j FlinkJobDetail) Parallelism() int {
	p := 0
	for _, v := range j.Vertices {
		p = max(p, v.Parallelism)
	}
	return p
}

// TaskStates counts the job's tasks by state, e.g. "41 RUNNING, 8
// SCHEDULED", in decreasing number.
func (j FlinkJobDetail) TaskStates() (string, map[string]int) {
	n := map[string]int{}
	for _, v := range j.Vertices {
		for st, c := range v.Tasks {
			if c > 0 {
				n[st] += c
			}
		}
	}
	states := make([]string, 0, len(n))
	for st := range n {
		states = append(states, st)
	}
	sort.Slice(states, func(a, b int) bool {
		if n[states[a]] != n[states[b]] {
			return n[states[a]] > n[states[b]]
		}
		return states[a] < states[b]
	})
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprintf("%d %s", n[st], st)
	}
	return strings.Join(parts, ", "), n
}

// RootException is the first line of the job's root exception (GET
// /jobs/:id/exceptions), or "" when it has none.
func (r *FlinkREST) RootException(ctx context.Context, id string) string {
	var ex struct {
		Root    string `json:"root-exception"`
		History struct {
			Entries []struct {
				Name       string `json:"exceptionName"`
				Stacktrace string `json:"stacktrace"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	if err := r.do(ctx, "GET", "/jobs/"+url.PathEscape(id)+"/exceptions", &ex); err != nil {
		return ""
	}
	s := ex.Root
	if s == "" && len(ex.History.Entries) > 0 {
		s = ex.History.Entries[0].Stacktrace
	}
	return innermostCause(s)
}

// innermostCause is the last "Caused by:" line of a Java stack trace (the
// SDK harness's error, when a Go worker failed), else its first line,
// cut at 400 bytes.
func innermostCause(trace string) string {
	lines := strings.Split(strings.TrimSpace(trace), "\n")
	line := lines[0]
	for _, l := range lines {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "Caused by: "); ok {
			line = c
		}
	}
	line = strings.TrimSpace(line)
	if len(line) > 400 {
		line = line[:400] + "..."
	}
	return line
}

// FlinkRoom is the cluster's capacity for a job named name: Capacity, with
// the slots of the active jobs of that name counted free when replace is
// set (--replace cancels them before it submits). An API that does not
// answer gives the unknown capacity, which caps and refuses nothing; the
// submission then fails on the REST API itself.
func FlinkRoom(ctx context.Context, rest *FlinkREST, name string, replace bool) FlinkCapacity {
	c, err := rest.Capacity(ctx)
	if err != nil {
		return FlinkCapacity{}
	}
	// A JobManager that has just started again knows no job, yet counts
	// the slots its TaskManagers still hold for the job it lost until they
	// release them (up to a heartbeat timeout): a resubmission right after
	// a JobManager's kill found 0 free slots of 8, and was refused. With no
	// active job, every slot frees soon: wait for that, a while.
	if c.Fixed() && c.SlotsFree < c.SlotsTotal && noActiveJob(ctx, rest) {
		deadline := time.Now().Add(slotSettle)
		for c.SlotsFree < c.SlotsTotal && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return c
			case <-time.After(slotPoll):
			}
			if n, err := rest.Capacity(ctx); err == nil {
				c = n
			}
		}
	}
	if replace {
		jobs, _ := rest.ActiveJobs(ctx, name)
		for _, j := range jobs {
			if d, err := rest.Job(ctx, j.ID); err == nil {
				c.SlotsFree = min(c.SlotsTotal, c.SlotsFree+d.Parallelism())
			}
		}
	}
	return c
}

// slotSettle is how long FlinkRoom waits for the slots of a cluster that
// runs no job to be free (Flink's heartbeat timeout is 50 s), polling every
// slotPoll. Variables for tests.
var slotSettle, slotPoll = 90 * time.Second, time.Second

// noActiveJob says whether the cluster answers that it has no active job.
func noActiveJob(ctx context.Context, rest *FlinkREST) bool {
	jobs, err := rest.Jobs(ctx)
	if err != nil {
		return false
	}
	for _, j := range jobs {
		if j.Active() {
			return false
		}
	}
	return true
}
