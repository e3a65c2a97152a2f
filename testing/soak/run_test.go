package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeapUsedReadsG1HeapNotMetaspace(t *testing.T) {
	out := `29573:
 garbage-first heap   total 262144K, used 78804K [0x0000000080000000, 0x0000000100000000)
  region size 1024K, 21 young (21504K), 0 survivors (0K)
 Metaspace       used 97573K, committed 98240K, reserved 1179648K
`
	m := heapUsed.FindStringSubmatch(out)
	if m == nil || m[1] != "78804" {
		t.Errorf("heapUsed on jcmd GC.heap_info = %q, want 78804", m)
	}
}

func TestFindJobTakesTheNewestRunningJob(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jobs/overview" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"jobs":[
			{"jid":"old","name":"soak","state":"RUNNING","start-time":100},
			{"jid":"cancelled","name":"soak","state":"CANCELED","start-time":300},
			{"jid":"new","name":"soak","state":"RUNNING","start-time":200}]}`))
	}))
	defer srv.Close()
	e := &env{cfg: Config{FlinkREST: srv.URL + "/"}}
	if err := e.findJob(context.Background(), &proc{exited: make(chan struct{})}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{srv.URL, "new"}, []string{e.restURL, e.jobID}); diff != "" {
		t.Errorf("findJob (-want +got):\n%s", diff)
	}
}

func TestRestCandidatesFollowFlinkRestPorts(t *testing.T) {
	t.Setenv("FLINK_REST_PORTS", "18081-18083")
	got := (&env{}).restCandidates()
	want := []string{"http://127.0.0.1:18081", "http://127.0.0.1:18082", "http://127.0.0.1:18083"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restCandidates (-want +got):\n%s", diff)
	}
}
