package runners

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
)

// fakeCluster answers Flink 1.19's REST API as far as the slot rule and the
// task wait read it: GET /overview, /jobmanager/config, /jobs/overview,
// /jobs/:id (with vertices), /jobs/:id/exceptions, PATCH /jobs/:id?mode=cancel.
type fakeCluster struct {
	mu           sync.Mutex
	target       string
	taskManagers int
	slots, free  int
	jobs         []FlinkJobDetail
	starts       map[string]int64
	root         string
	cancelled    []string
	// overview, when set, runs before each /overview is answered (with
	// mu held): a test changes the cluster as it is asked.
	overview func(*fakeCluster)
}

func (f *fakeCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	enc := json.NewEncoder(w)
	switch path := r.URL.Path; {
	case path == "/overview":
		if f.overview != nil {
			f.overview(f)
		}
		_ = enc.Encode(map[string]int{"taskmanagers": f.taskManagers, "slots-total": f.slots, "slots-available": f.free})
	case path == "/jobmanager/config":
		conf := []map[string]string{{"key": "rest.port", "value": "8081"}}
		if f.target != "" {
			conf = append(conf, map[string]string{"key": "execution.target", "value": f.target})
		}
		_ = enc.Encode(conf)
	case path == "/jobs/overview":
		var jobs []FlinkJob
		for _, j := range f.jobs {
			jobs = append(jobs, FlinkJob{ID: j.ID, Name: j.Name, State: j.State, Start: f.starts[j.ID]})
		}
		_ = enc.Encode(map[string]any{"jobs": jobs})
	case strings.HasSuffix(path, "/exceptions"):
		_ = enc.Encode(map[string]any{"root-exception": f.root})
	case strings.HasPrefix(path, "/jobs/"):
		id := strings.TrimPrefix(path, "/jobs/")
		for i := range f.jobs {
			if f.jobs[i].ID != id {
				continue
			}
			if r.Method == http.MethodPatch {
				f.jobs[i].State = "CANCELED"
				f.cancelled = append(f.cancelled, id)
				_, _ = w.Write([]byte("{}"))
				return
			}
			_ = enc.Encode(f.jobs[i])
			return
		}
		http.Error(w, `{"errors":["Job could not be found."]}`, http.StatusNotFound)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeCluster) rest(t *testing.T) *FlinkREST {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	r, err := NewFlinkREST(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// bronzeJob is a job of parallelism p whose read vertex has running of its
// p tasks RUNNING and the rest in state rest.
func bronzeJob(id string, p, running int, rest string) FlinkJobDetail {
	read := map[string]int{"RUNNING": running}
	if running < p {
		read[rest] = p - running
	}
	return FlinkJobDetail{ID: id, Name: "bronze-root-1206023000-1a2b3c", State: "RUNNING", Vertices: []FlinkVertex{
		{ID: "v0", Name: "Impulse", Parallelism: 1, Status: "RUNNING", Tasks: map[string]int{"RUNNING": 1}},
		{ID: "v1", Name: "kafkaio.Read", Parallelism: p, Status: "RUNNING", Tasks: read},
	}}
}

func TestFlinkCapacityTellsFixedFromElastic(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fc   *fakeCluster
		want FlinkCapacity
	}{
		{"standalone", &fakeCluster{taskManagers: 2, slots: 8, free: 6},
			FlinkCapacity{Known: true, TaskManagers: 2, SlotsTotal: 8, SlotsFree: 6}},
		{"operator standalone mode", &fakeCluster{target: "remote", taskManagers: 1, slots: 2, free: 2},
			FlinkCapacity{Known: true, Target: "remote", TaskManagers: 1, SlotsTotal: 2, SlotsFree: 2}},
		{"operator native session, scaled to zero", &fakeCluster{target: "kubernetes-session"},
			FlinkCapacity{Known: true, Elastic: true, Target: "kubernetes-session"}},
		{"operator native session, one idle TaskManager", &fakeCluster{target: "kubernetes-session", taskManagers: 1, slots: 2, free: 2},
			FlinkCapacity{Known: true, Elastic: true, Target: "kubernetes-session", TaskManagers: 1, SlotsTotal: 2, SlotsFree: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.fc.rest(t).Capacity(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Capacity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlotRule(t *testing.T) {
	fixed := FlinkCapacity{Known: true, TaskManagers: 2, SlotsTotal: 8, SlotsFree: 4}
	elastic := FlinkCapacity{Known: true, Elastic: true, Target: "kubernetes-session"}
	for _, c := range []struct {
		name       string
		c          FlinkCapacity
		n, want    int
		whyHas     string
		refuse     int // a parallelism CheckSlots refuses; 0: none
		refuseHas  string
		acceptUpTo int
	}{
		{name: "fixed, more partitions than free slots", c: fixed, n: 8, want: 4, whyHas: "4 free slots, fewer than the 8 partitions",
			refuse: 5, refuseHas: "parallelism 5 needs 5 slots, the cluster has 4 free (8 in all, 2 TaskManagers): pass --parallelism=4 or add TaskManagers", acceptUpTo: 4},
		{name: "fixed, room for every partition", c: fixed, n: 3, want: 3, whyHas: "the partition count (the cluster has 4 free slots)", acceptUpTo: 4},
		{name: "fixed, no free slot", c: FlinkCapacity{Known: true, TaskManagers: 2, SlotsTotal: 8}, n: 4, want: 4, whyHas: "0 free slots",
			refuse: 1, refuseHas: "parallelism 1 needs 1 slots, the cluster has 0 free (8 in all, 2 TaskManagers): stop another job or add TaskManagers"},
		{name: "elastic: TaskManagers start on demand", c: elastic, n: 8, want: 8, whyHas: "elastic cluster", acceptUpTo: 64},
		{name: "unknown: no --flink-rest", n: 8, want: 8, whyHas: "without --flink-rest", acceptUpTo: 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := c.c.DefaultParallelism(c.n)
			if got != c.want || !strings.Contains(why, c.whyHas) {
				t.Errorf("DefaultParallelism(%d) = %d, %q; want %d, with %q", c.n, got, why, c.want, c.whyHas)
			}
			for p := 1; p <= c.acceptUpTo; p++ {
				if err := c.c.CheckSlots(p); err != nil {
					t.Errorf("CheckSlots(%d) = %v, want nil", p, err)
				}
			}
			if c.refuse > 0 {
				err := c.c.CheckSlots(c.refuse)
				if !errors.Is(err, ErrNoSlots) || !strings.Contains(err.Error(), c.refuseHas) || strings.Contains(err.Error(), "\n") {
					t.Errorf("CheckSlots(%d) = %v; want one line ErrNoSlots with %q", c.refuse, err, c.refuseHas)
				}
			}
		})
	}
}

func TestFlinkRoomCountsTheReplacedJob(t *testing.T) {
	fc := &fakeCluster{taskManagers: 2, slots: 8, free: 4, jobs: []FlinkJobDetail{bronzeJob("old", 4, 4, "")}}
	r := fc.rest(t)
	ctx := context.Background()
	if got := FlinkRoom(ctx, r, "bronze", false).SlotsFree; got != 4 {
		t.Errorf("free slots without --replace = %d, want 4", got)
	}
	if got := FlinkRoom(ctx, r, "bronze", true).SlotsFree; got != 8 {
		t.Errorf("free slots with --replace = %d, want 8 (the replaced job's 4 count)", got)
	}
	if got := FlinkRoom(ctx, &FlinkREST{Base: "http://127.0.0.1:1"}, "bronze", false); got.Known {
		t.Errorf("an API that does not answer: %+v, want the unknown capacity", got)
	}
}

// A JobManager just started again counts its TaskManagers' slots of the
// lost job as taken for a while: with no active job, FlinkRoom waits until
// they are free; with a job running, it takes the free slots as they are.
func TestFlinkRoomWaitsForSlotsToSettle(t *testing.T) {
	slotSettle, slotPoll = 5*time.Second, 10*time.Millisecond
	t.Cleanup(func() { slotSettle, slotPoll = 90*time.Second, time.Second })
	// The TaskManagers release the lost job's slots once FlinkRoom has
	// found them taken twice.
	asked := 0
	fc := &fakeCluster{taskManagers: 2, slots: 8, free: 0, overview: func(f *fakeCluster) {
		if asked++; asked == 3 {
			f.free = 8
		}
	}}
	r := fc.rest(t)
	if got := FlinkRoom(context.Background(), r, "bronze", false).SlotsFree; got != 8 {
		t.Errorf("free slots after a JobManager's restart = %d, want 8 once released", got)
	}
	fc.mu.Lock()
	if asked < 3 {
		t.Errorf("FlinkRoom asked for the overview %d times, want it to wait for the slots (3)", asked)
	}
	fc.mu.Unlock()

	busy := &fakeCluster{taskManagers: 2, slots: 8, free: 4, jobs: []FlinkJobDetail{bronzeJob("other", 4, 4, "")}}
	start := time.Now()
	if got := FlinkRoom(context.Background(), busy.rest(t), "bronze", false).SlotsFree; got != 4 {
		t.Errorf("free slots beside a running job = %d, want 4", got)
	}
	if d := time.Since(start); d >= slotSettle {
		t.Errorf("FlinkRoom waited %v beside a running job, want no wait", d)
	}
}

// fakeJobService is the job server's side of a wait: its state of the
// job, its list of jobs, and the cancels it got.
type fakeJobService struct {
	jobpb.JobServiceClient
	mu        sync.Mutex
	state     jobpb.JobState_Enum
	jobs      []*jobpb.JobInfo
	cancelled []string
}

func (f *fakeJobService) GetState(context.Context, *jobpb.GetJobStateRequest, ...grpc.CallOption) (*jobpb.JobStateEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &jobpb.JobStateEvent{State: f.state}, nil
}

func (f *fakeJobService) GetJobs(context.Context, *jobpb.GetJobsRequest, ...grpc.CallOption) (*jobpb.GetJobsResponse, error) {
	return &jobpb.GetJobsResponse{JobInfo: f.jobs}, nil
}

func (f *fakeJobService) Cancel(_ context.Context, req *jobpb.CancelJobRequest, _ ...grpc.CallOption) (*jobpb.CancelJobResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, req.GetJobId())
	return &jobpb.CancelJobResponse{}, nil
}

func TestTaskWait(t *testing.T) {
	fixed := FlinkCapacity{Known: true, TaskManagers: 2, SlotsTotal: 8, SlotsFree: 4}
	for _, c := range []struct {
		name     string
		fc       *fakeCluster
		state    jobpb.JobState_Enum
		before   map[string]bool
		capacity FlinkCapacity
		wantErr  error
		wantHas  []string
		wantJob  string
	}{
		{name: "every task RUNNING", fc: &fakeCluster{jobs: []FlinkJobDetail{bronzeJob("new", 4, 4, "")}},
			state: jobpb.JobState_RUNNING, capacity: fixed, wantJob: "new"},
		{name: "Flink RUNNING, tasks SCHEDULED for want of slots",
			fc:    &fakeCluster{taskManagers: 2, slots: 8, jobs: []FlinkJobDetail{bronzeJob("new", 8, 4, "SCHEDULED")}},
			state: jobpb.JobState_RUNNING, capacity: fixed, wantErr: ErrNoSlots,
			wantHas: []string{"parallelism 8 needs 8 slots, the cluster has 4 free", "pass --parallelism=4 or add TaskManagers", "after --async-wait=", "5 RUNNING, 4 SCHEDULED"}},
		{name: "elastic: the TaskManagers did not start",
			fc:       &fakeCluster{target: "kubernetes-session", jobs: []FlinkJobDetail{bronzeJob("new", 8, 0, "SCHEDULED")}},
			state:    jobpb.JobState_RUNNING,
			capacity: FlinkCapacity{Known: true, Elastic: true, Target: "kubernetes-session"}, wantErr: ErrNoSlots,
			wantHas: []string{"parallelism 8 needs 8 slots", "elastic cluster has 0 TaskManagers", "did not start"}},
		{name: "workers slow to start",
			fc:    &fakeCluster{taskManagers: 2, slots: 8, free: 4, root: "java.lang.RuntimeException: worker\nCaused by: java.io.IOException: boot: exec format error", jobs: []FlinkJobDetail{bronzeJob("new", 4, 2, "INITIALIZING")}},
			state: jobpb.JobState_RUNNING, capacity: fixed, wantErr: ErrNotRunning,
			wantHas: []string{"2 INITIALIZING", "TaskManager logs", "last failure: java.io.IOException: boot: exec format error"}},
		{name: "the job failed first",
			fc:    &fakeCluster{root: "java.lang.Exception: first\nCaused by: java.lang.RuntimeException: no SQLite catalog at /x/catalog.db", jobs: []FlinkJobDetail{{ID: "new", Name: "bronze", State: "FAILED"}}},
			state: jobpb.JobState_RUNNING, wantErr: ErrNotRunning,
			wantHas: []string{"is FAILED before every task ran", "no SQLite catalog at /x/catalog.db"}},
		{name: "an older job of the name is not this one",
			fc:     &fakeCluster{jobs: []FlinkJobDetail{{ID: "old", Name: "bronze", State: "FAILED"}}},
			before: map[string]bool{"old": true}, state: jobpb.JobState_RUNNING, wantErr: ErrNotRunning,
			wantHas: []string{`no Flink job "bronze"`}},
		{name: "without --flink-rest: the job server's RUNNING", state: jobpb.JobState_RUNNING, wantJob: "j1"},
		{name: "without --flink-rest: the job server's STARTING until the wait ends", state: jobpb.JobState_STARTING,
			wantErr: ErrNotRunning, wantHas: []string{"job j1 is STARTING after --async-wait"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := taskWait{client: &fakeJobService{state: c.state}, jobID: "j1", name: "bronze", before: c.before,
				capacity: c.capacity, wait: 50 * time.Millisecond, every: 10 * time.Millisecond}
			if c.fc != nil {
				w.rest = c.fc.rest(t)
			}
			j, err := w.run(context.Background())
			if c.wantErr == nil {
				if err != nil || j.ID != c.wantJob {
					t.Fatalf("run = %s, %v; want job %s running", j.ID, err, c.wantJob)
				}
				return
			}
			if !errors.Is(err, c.wantErr) || !errors.Is(err, ErrNotRunning) {
				t.Fatalf("run = %v; want %v (and ErrNotRunning)", err, c.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
			for _, s := range c.wantHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestTaskWaitBoundedBatchStages(t *testing.T) {
	// A bounded job in batch mode: the first stage runs, the next waits for
	// its input (CREATED), not for slots.
	batch := bronzeJob("new", 4, 0, "CREATED")
	batch.Vertices[0].Tasks = map[string]int{"RUNNING": 1}
	fc := &fakeCluster{jobs: []FlinkJobDetail{batch}}
	w := taskWait{client: &fakeJobService{state: jobpb.JobState_RUNNING}, jobID: "j1", name: "bronze", rest: fc.rest(t),
		wait: 50 * time.Millisecond, every: 10 * time.Millisecond, bounded: true}
	if j, err := w.run(context.Background()); err != nil || j.ID != "new" {
		t.Errorf("bounded job with its first stage RUNNING: %s, %v; want it running", j.ID, err)
	}
	w.bounded = false
	if _, err := w.run(context.Background()); !errors.Is(err, ErrNotRunning) {
		t.Errorf("the same tasks of an unbounded job: %v, want ErrNotRunning", err)
	}
	fc.jobs[0].Vertices[1].Tasks = map[string]int{"RUNNING": 2, "SCHEDULED": 2}
	w.bounded = true
	if _, err := w.run(context.Background()); !errors.Is(err, ErrNoSlots) {
		t.Errorf("a bounded job with tasks SCHEDULED: %v, want ErrNoSlots", err)
	}
}

func TestTaskWaitReturnsOnTheJobsEnd(t *testing.T) {
	w := taskWait{client: &fakeJobService{state: jobpb.JobState_DONE}, jobID: "j1", name: "bronze", wait: time.Second, every: 10 * time.Millisecond}
	if _, err := w.run(context.Background()); !errors.Is(err, errJobEnded) {
		t.Errorf("a job the job server reports DONE: %v, want errJobEnded", err)
	}
}
