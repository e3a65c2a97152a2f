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

	"github.com/google/go-cmp/cmp"
)

// fakeJobManager answers the three calls FlinkREST makes, as Flink 1.19's
// REST API does (GET /jobs/overview, GET /jobs/:id, PATCH /jobs/:id?mode=cancel);
// a cancelled job turns CANCELLING, then CANCELED on the next read.
type fakeJobManager struct {
	mu   sync.Mutex
	jobs []FlinkJob
}

func (f *fakeJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/jobs/overview":
		_ = json.NewEncoder(w).Encode(map[string]any{"jobs": f.jobs})
	case strings.HasPrefix(r.URL.Path, "/jobs/"):
		id := strings.TrimPrefix(r.URL.Path, "/jobs/")
		for i := range f.jobs {
			j := &f.jobs[i]
			if j.ID != id {
				continue
			}
			switch {
			case r.Method == http.MethodPatch && r.URL.Query().Get("mode") == "cancel":
				j.State = "CANCELLING"
				w.WriteHeader(http.StatusAccepted)
				_, _ = w.Write([]byte("{}"))
			case r.Method == http.MethodGet:
				_ = json.NewEncoder(w).Encode(j)
				if j.State == "CANCELLING" {
					j.State = "CANCELED"
				}
			}
			return
		}
		http.Error(w, `{"errors":["Job could not be found."]}`, http.StatusNotFound)
	default:
		http.NotFound(w, r)
	}
}

func TestFlinkRESTActiveJobsAndCancel(t *testing.T) {
	jm := &fakeJobManager{jobs: []FlinkJob{
		{ID: "a1", Name: "bronze", State: "RUNNING"},
		{ID: "a0", Name: "bronze", State: "CANCELED"},
		{ID: "b1", Name: "silver", State: "RUNNING"},
	}}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	ctx := context.Background()

	r, err := NewFlinkREST(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ActiveJobs(ctx, "bronze")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FlinkJob{{ID: "a1", Name: "bronze", State: "RUNNING"}}, got); diff != "" {
		t.Errorf("active bronze jobs (-want +got):\n%s", diff)
	}
	cancelled, err := CancelFlinkJobs(ctx, srv.URL, "bronze")
	if err != nil || len(cancelled) != 1 {
		t.Fatalf("CancelFlinkJobs = %v, %v; want the one running job", cancelled, err)
	}
	if got, _ := r.ActiveJobs(ctx, "bronze"); len(got) != 0 {
		t.Errorf("after the cancel: %v still active", got)
	}
	if got, _ := r.ActiveJobs(ctx, "silver"); len(got) != 1 {
		t.Errorf("the cancel touched another pipeline's job: %v", got)
	}
}

func TestFlinkRESTGet(t *testing.T) {
	jm := &fakeJobManager{jobs: []FlinkJob{{ID: "a1", Name: "bronze", State: "RUNNING"}}}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	r, err := NewFlinkREST(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var j FlinkJob
	if err := r.Get(context.Background(), "/jobs/a1", &j); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(FlinkJob{ID: "a1", Name: "bronze", State: "RUNNING"}, j); diff != "" {
		t.Errorf("GET /jobs/a1 (-want +got):\n%s", diff)
	}
	err = r.Get(context.Background(), "/jobs/zz", &j)
	if !errors.Is(err, ErrFlinkREST) || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "Job could not be found") {
		t.Errorf("GET of an unknown job: %v; want ErrFlinkREST with the status and Flink's message", err)
	}
}

func TestNewFlinkRESTNamesTheFlag(t *testing.T) {
	for _, bad := range []string{"127.0.0.1:8081", "ftp://x", "http://"} {
		if _, err := NewFlinkREST(bad); err == nil || !strings.Contains(err.Error(), "--flink-rest") {
			t.Errorf("NewFlinkREST(%q) = %v, want an error naming --flink-rest", bad, err)
		}
	}
}

func TestFlinkRESTRequestCancel(t *testing.T) {
	jm := &fakeJobManager{jobs: []FlinkJob{{ID: "a1", Name: "bronze", State: "RUNNING", Start: 1764633600000}}}
	srv := httptest.NewServer(jm)
	defer srv.Close()
	ctx := context.Background()
	r := &FlinkREST{Base: srv.URL}

	jobs, err := r.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FlinkJob{{ID: "a1", Name: "bronze", State: "RUNNING", Start: 1764633600000}}, jobs); diff != "" {
		t.Errorf("Jobs, start-time included (-want +got):\n%s", diff)
	}
	if err := r.RequestCancel(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	// Accepted, not yet stopped: the request does not wait.
	jm.mu.Lock()
	state := jm.jobs[0].State
	jm.mu.Unlock()
	if state != "CANCELLING" {
		t.Errorf("after RequestCancel the job is %s, want CANCELLING", state)
	}
	if err := r.RequestCancel(ctx, "nosuchjob"); !errors.Is(err, ErrFlinkREST) || !strings.Contains(err.Error(), "404") {
		t.Errorf("RequestCancel of an unknown job = %v, want an ErrFlinkREST with the 404", err)
	}
}

func TestLoopbackFlinkRESTs(t *testing.T) {
	def := LoopbackFlinkRESTs("")
	if len(def) != 9 || def[0] != "http://127.0.0.1:8081" || def[8] != "http://127.0.0.1:8089" {
		t.Errorf("default range: %v, want 8081-8089", def)
	}
	tests := []struct {
		ports string
		want  []string
	}{
		{"18081-18083", []string{"http://127.0.0.1:18081", "http://127.0.0.1:18082", "http://127.0.0.1:18083"}},
		{"9091", []string{"http://127.0.0.1:9091"}},
		{" 9091 - 9092 ", []string{"http://127.0.0.1:9091", "http://127.0.0.1:9092"}},
		{"9092-9091", def},
		{"x-9091", def},
		{"0-3", def},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, LoopbackFlinkRESTs(tc.ports)); diff != "" {
			t.Errorf("LoopbackFlinkRESTs(%q) (-want +got):\n%s", tc.ports, diff)
		}
	}
}
