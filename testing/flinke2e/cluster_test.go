//go:build e2e

package flinke2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
)

// TestFlinkClusterE2E runs bronze on a standalone Flink 1.19 cluster (a JobManager and two
// TaskManagers, separate processes, testing/services/flinkcluster.sh), through Beam's job
// server with --flink-master, PROCESS workers (Beam's boot program, through
// flink/worker-process.sh) running a prebuilt --worker_binary, checkpoints on MinIO, tables on
// MinIO. One topic, one pair of tables, in phases:
//
//   - Submit: --async returns once the Flink job is RUNNING; a second identical submission
//     says the job runs, exits 0 and starts nothing.
//   - TaskManagerKill: kill -9 of the TaskManager running the job while events arrive; Flink
//     restarts the job from its last checkpoint on MinIO; no OutOfMemoryError; exactly once.
//   - JobManagerKill: kill -9 of the JobManager while events arrive (no HA: the job is lost);
//     a new JobManager, then the same submission again, which resumes from the tables'
//     offsets; exactly once.
//   - Stop: a foreground submission with --replace, stopped with SIGINT: Flink's REST API
//     must show the job CANCELED, no boot program or worker must be left, and no copy of
//     the worker binary in /tmp.
//
// After each phase every produced (partition, offset) must be in exactly one of bronze and
// its dead-letter table, once.
func TestFlinkClusterE2E(t *testing.T) {
	start := time.Now()
	root := cmdtest.MustRepoRoot(t)
	s3Endpoint := "http://127.0.0.1:" + envOr("MINIO_PORT", "9000")
	restURL := "http://127.0.0.1:" + envOr("FLINKC_REST_PORT", "8081")

	dir := t.TempDir()
	svc, workerCmd, boot, bin := standalone(t, root, s3Endpoint, dir, start)

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	brokers := []string{"127.0.0.1:" + envOr("KAFKA_PORT", "9092")}
	stamp := time.Now().UnixNano()
	topic := fmt.Sprintf("haade.e2e.flinkcluster.%d", stamp)
	const partitions = 4
	createTopic(ctx, t, brokers, topic, partitions)

	creds := []string{"AWS_ACCESS_KEY_ID=minioadmin", "AWS_SECRET_ACCESS_KEY=minioadmin", "AWS_REGION=us-east-1"}
	for _, c := range creds {
		k, v, _ := strings.Cut(c, "=")
		t.Setenv(k, v) // for ScanRows in this process
	}
	cat := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "catalog.db"),
		Warehouse: fmt.Sprintf("s3://warehouse/e2e-flinkcluster-%d/", stamp), S3Endpoint: s3Endpoint}
	envCfg, _ := json.Marshal(map[string]any{"command": workerCmd, "env": map[string]string{
		"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1",
		"HAADE_FLINK_BOOT": boot,
	}})
	job := fmt.Sprintf("haadee2ecluster%d", stamp)
	args := func(extra ...string) []string {
		return append([]string{"--runner=flink", "--endpoint=127.0.0.1:" + envOr("FLINK_JOB_PORT", "8099"),
			"--environment_type=PROCESS", "--environment_config=" + string(envCfg), "--worker_binary=" + bin,
			"--flink-rest=" + restURL, "--job_name=" + job,
			"--brokers=" + strings.Join(brokers, ","), "--topic=" + topic,
			"--catalog=sql", "--catalog-uri=" + cat.URI, "--warehouse=" + cat.Warehouse, "--s3-endpoint=" + s3Endpoint,
			"--commit-interval=5s", "--metrics-addr=", "--pipeline-id=bronze-e2e-flinkcluster"}, extra...)
	}
	env := append(os.Environ(), creds...)
	rest, err := runners.NewFlinkREST(restURL)
	if err != nil {
		t.Fatal(err)
	}
	prod := &producer{t: t, brokers: brokers, topic: topic}
	prod.produce(ctx, 2000, 1, true)
	stream := newStream(ctx, prod)
	defer stream.stop()

	// Submit: --async returns once the job runs; a second submission starts nothing.
	t0 := time.Now()
	sub := submit(t, bin, args("--async"), env, filepath.Join(dir, "submit-async.log"))
	if err := sub.wait(6 * time.Minute); err != nil {
		sub.dump(t)
		t.Fatalf("--async submission: %v", err)
	}
	running := activeJobs(ctx, t, rest, job)
	if len(running) != 1 || running[0].State != "RUNNING" {
		t.Fatalf("after --async returned: Flink jobs %v, want one RUNNING", running)
	}
	t.Logf("--async returned after %v with Flink job %s RUNNING", time.Since(t0).Round(100*time.Millisecond), running[0].ID)
	flinkJob := running[0].ID
	sub = submit(t, bin, args("--async"), env, filepath.Join(dir, "submit-again.log"))
	if err := sub.wait(3 * time.Minute); err != nil {
		sub.dump(t)
		t.Fatalf("second submission: %v, want exit 0", err)
	}
	if b, _ := os.ReadFile(sub.log); !strings.Contains(string(b), "already runs") {
		sub.dump(t)
		t.Errorf("second submission: no line saying the job already runs")
	}
	if again := activeJobs(ctx, t, rest, job); len(again) != 1 || again[0].ID != flinkJob {
		t.Fatalf("after a second submission: Flink jobs %v, want only %s", again, flinkJob)
	}

	want := waitAll(ctx, t, cat, prod, 5*time.Minute, "the first events")
	got := checkExactlyOnce(ctx, t, cat, want, true)
	t.Logf("submitted: %d bronze + %d dead letters, exactly once, after %v", got.bronze, got.dlq, time.Since(start).Round(time.Second))

	t.Run("TaskManagerKill", func(t *testing.T) {
		stream.start()
		waitCheckpoint(ctx, t, rest, flinkJob, 1)
		tm := jobTaskManager(ctx, t, rest, flinkJob)
		before := checkpointCounts(ctx, t, rest, flinkJob)
		if _, err := cmdtest.Script(svc.root, nil, "flinkcluster", "kill-taskmanager", tm); err != nil {
			t.Fatal(err)
		}
		t.Logf("kill -9 of TaskManager %s (completed checkpoints: %d) after %v", tm, before.Completed, time.Since(start).Round(time.Second))
		time.Sleep(10 * time.Second)
		if _, err := cmdtest.Script(svc.root, nil, "flinkcluster", "start-taskmanager", tm); err != nil {
			t.Fatal(err)
		}
		// Flink restores the job from its latest checkpoint on MinIO.
		wctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
		defer cancel()
		var c checkpoints
		if err := wait.Every(wctx, 3*time.Second, func() error {
			if c = checkpointCounts(ctx, t, rest, flinkJob); c.Restored == nil || c.Restored.ID == 0 || c.Completed <= before.Completed {
				return fmt.Errorf("%+v", c)
			}
			return nil
		}); err != nil {
			t.Fatalf("no restore from a checkpoint and a new completed checkpoint within 4 min: %v", err)
		}
		t.Logf("restored checkpoint %d (%s); checkpoints complete again (%d completed, %d failed)", c.Restored.ID, c.Restored.Path, c.Completed, c.Failed)
		stream.pause()
		want := waitAll(ctx, t, cat, prod, 5*time.Minute, "every record after the TaskManager kill")
		got := checkExactlyOnce(ctx, t, cat, want, true)
		noOOM(t, root)
		t.Logf("after the TaskManager kill: %d bronze + %d dead letters = %d produced, exactly once", got.bronze, got.dlq, len(want))
	})

	t.Run("JobManagerKill", func(t *testing.T) {
		stream.start()
		time.Sleep(8 * time.Second)
		if _, err := cmdtest.Script(svc.root, nil, "flinkcluster", "kill-jobmanager"); err != nil {
			t.Fatal(err)
		}
		t.Logf("kill -9 of the JobManager after %v", time.Since(start).Round(time.Second))
		time.Sleep(5 * time.Second)
		if _, err := cmdtest.Script(svc.root, nil, "flinkcluster", "start-jobmanager"); err != nil {
			t.Fatal(err)
		}
		// No HA: the new JobManager knows no job. The same submission submits again.
		waitTaskManagers(ctx, t, rest, 2)
		sub := submit(t, bin, args("--async"), env, filepath.Join(dir, "resubmit.log"))
		if err := sub.wait(6 * time.Minute); err != nil {
			sub.dump(t)
			t.Fatalf("resubmission: %v", err)
		}
		running := activeJobs(ctx, t, rest, job)
		if len(running) != 1 {
			t.Fatalf("after the resubmission: Flink jobs %v, want one", running)
		}
		flinkJob = running[0].ID
		stream.pause()
		want := waitAll(ctx, t, cat, prod, 5*time.Minute, "every record after the JobManager kill")
		got := checkExactlyOnce(ctx, t, cat, want, true)
		t.Logf("after the JobManager kill and the resubmission: %d bronze + %d dead letters = %d produced, exactly once", got.bronze, got.dlq, len(want))
	})

	t.Run("Stop", func(t *testing.T) {
		stream.start()
		sub := submit(t, bin, args("--replace"), env, filepath.Join(dir, "foreground.log"))
		var fj runners.FlinkJob
		waitFor(ctx, t, 5*time.Minute, "the replacing job to run", sub, func() bool {
			jobs := activeJobs(ctx, t, rest, job)
			if len(jobs) == 1 && jobs[0].ID != flinkJob && jobs[0].State == "RUNNING" {
				fj = jobs[0]
				return true
			}
			return false
		})
		if st := jobState(ctx, t, rest, flinkJob); st != "CANCELED" {
			t.Errorf("--replace: the replaced job %s is %s, want CANCELED", flinkJob, st)
		}
		before := prod.produced()
		waitFor(ctx, t, 3*time.Minute, "the replacing job to catch up", sub, func() bool {
			s, err := scan(ctx, cat)
			return err == nil && s.distinct() >= len(before)
		})
		stream.pause()
		sub.interrupt(t)
		if err := sub.wait(3 * time.Minute); err == nil || !strings.Contains(err.Error(), "exit status 130") {
			sub.dump(t)
			t.Errorf("SIGINT: %v, want exit status 130", err)
		}
		if st := jobState(ctx, t, rest, fj.ID); st != "CANCELED" && st != "FINISHED" {
			t.Fatalf("after bronze's SIGINT the Flink job %s is %s, want CANCELED", fj.ID, st)
		}
		if jobs := activeJobs(ctx, t, rest, job); len(jobs) != 0 {
			t.Fatalf("after the stop: %v still active", jobs)
		}
		t.Logf("SIGINT stopped Flink job %s: CANCELED", fj.ID)
		// Nothing left behind: the boot programs and workers exit, and no copy of the
		// worker binary stays in /tmp.
		waitGone(t, 60*time.Second, boot)
		if left := workerCopies(bin, start); len(left) > 0 {
			t.Errorf("copies of the worker binary left in /tmp: %v", left)
		}
		// The records of the stopped run's last seconds: a last bounded run takes them.
		bounded := submit(t, bin, []string{"--runner=direct", "--brokers=" + strings.Join(brokers, ","), "--topic=" + topic,
			"--catalog=sql", "--catalog-uri=" + cat.URI, "--warehouse=" + cat.Warehouse, "--s3-endpoint=" + s3Endpoint,
			"--commit-interval=5s", "--metrics-addr=", "--pipeline-id=bronze-e2e-flinkcluster", "--bounded"}, env, filepath.Join(dir, "bounded.log"))
		if err := bounded.wait(3 * time.Minute); err != nil {
			bounded.dump(t)
			t.Fatalf("bounded catch-up on Prism: %v", err)
		}
		got := checkExactlyOnce(ctx, t, cat, prod.produced(), true)
		t.Logf("after the stop: %d bronze + %d dead letters, exactly once; whole test %v", got.bronze, got.dlq, time.Since(start).Round(time.Second))
	})
}

// stream produces 100 records every 500 ms (with malformed ones and tombstones) while started.
type stream struct {
	ctx     context.Context
	prod    *producer
	mu      sync.Mutex
	on      bool
	quit    chan struct{}
	stopped sync.WaitGroup
	paused  chan struct{}
}

func newStream(ctx context.Context, prod *producer) *stream {
	s := &stream{ctx: ctx, prod: prod, quit: make(chan struct{})}
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		for seed := uint64(100); ; seed++ {
			select {
			case <-s.quit:
				return
			case <-time.After(500 * time.Millisecond):
			}
			s.mu.Lock()
			if s.on {
				s.prod.produce(s.ctx, 100, seed, seed%5 == 0)
			}
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *stream) start() { s.mu.Lock(); s.on = true; s.mu.Unlock() }

// pause returns once no produce call is in flight.
func (s *stream) pause() { s.mu.Lock(); s.on = false; s.mu.Unlock() }

func (s *stream) stop() { close(s.quit); s.stopped.Wait() }

// waitAll waits until the tables hold as many distinct offsets as were produced, and
// returns the produced ones.
func waitAll(ctx context.Context, t *testing.T, cat icebergio.CatalogConfig, prod *producer, d time.Duration, what string) map[key]bool {
	t.Helper()
	want := prod.produced()
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := wait.Every(wctx, 3*time.Second, func() error {
		s, err := scan(ctx, cat)
		if err == nil && s.distinct() < len(want) {
			err = fmt.Errorf("%d of %d", s.distinct(), len(want))
		}
		return err
	}); err != nil {
		t.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
	}
	return want
}

func activeJobs(ctx context.Context, t *testing.T, rest *runners.FlinkREST, name string) []runners.FlinkJob {
	t.Helper()
	jobs, err := rest.ActiveJobs(ctx, name)
	if err != nil {
		t.Fatalf("Flink REST: %v", err)
	}
	return jobs
}

func jobState(ctx context.Context, t *testing.T, rest *runners.FlinkREST, id string) string {
	t.Helper()
	var j runners.FlinkJob
	if err := rest.Get(ctx, "/jobs/"+id, &j); err != nil {
		t.Fatalf("Flink REST: %v", err)
	}
	return j.State
}

type checkpoints struct {
	Completed int
	Failed    int
	Restored  *struct {
		ID   int64  `json:"id"`
		Path string `json:"external_path"`
	}
}

func checkpointCounts(ctx context.Context, t *testing.T, rest *runners.FlinkREST, id string) checkpoints {
	t.Helper()
	var body struct {
		Counts struct {
			Completed int `json:"completed"`
			Failed    int `json:"failed"`
			Restored  int `json:"restored"`
		} `json:"counts"`
		Latest struct {
			Restored *struct {
				ID   int64  `json:"id"`
				Path string `json:"external_path"`
			} `json:"restored"`
		} `json:"latest"`
	}
	if err := rest.Get(ctx, "/jobs/"+id+"/checkpoints", &body); err != nil {
		return checkpoints{}
	}
	return checkpoints{Completed: body.Counts.Completed, Failed: body.Counts.Failed, Restored: body.Latest.Restored}
}

// waitCheckpoint waits until the job has completed n checkpoints (on MinIO).
func waitCheckpoint(ctx context.Context, t *testing.T, rest *runners.FlinkREST, id string, n int) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := wait.Every(wctx, 2*time.Second, func() error {
		if c := checkpointCounts(ctx, t, rest, id).Completed; c < n {
			return fmt.Errorf("%d of %d checkpoints completed", c, n)
		}
		return nil
	}); err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
}

// jobTaskManager returns the number (1 or 2) of a TaskManager that runs a task of the job:
// flinkcluster.sh names them tm-1 and tm-2.
func jobTaskManager(ctx context.Context, t *testing.T, rest *runners.FlinkREST, id string) string {
	t.Helper()
	var job struct {
		Vertices []struct {
			ID string `json:"id"`
		} `json:"vertices"`
	}
	if err := rest.Get(ctx, "/jobs/"+id, &job); err != nil || len(job.Vertices) == 0 {
		t.Fatalf("job %s vertices: %v", id, err)
	}
	var tms struct {
		TaskManagers []struct {
			ID string `json:"taskmanager-id"`
		} `json:"taskmanagers"`
	}
	for _, v := range job.Vertices {
		if err := rest.Get(ctx, "/jobs/"+id+"/vertices/"+v.ID+"/taskmanagers", &tms); err != nil {
			continue
		}
		for _, tm := range tms.TaskManagers {
			if n, ok := strings.CutPrefix(tm.ID, "tm-"); ok {
				return n
			}
		}
	}
	t.Fatalf("no TaskManager tm-N runs job %s", id)
	return ""
}

func waitTaskManagers(ctx context.Context, t *testing.T, rest *runners.FlinkREST, n int) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := wait.Every(wctx, 2*time.Second, func() error {
		var tms struct {
			TaskManagers []json.RawMessage `json:"taskmanagers"`
		}
		err := rest.Get(ctx, "/taskmanagers", &tms)
		if err == nil && len(tms.TaskManagers) < n {
			err = fmt.Errorf("%d TaskManagers registered", len(tms.TaskManagers))
		}
		return err
	}); err != nil {
		t.Fatalf("%d TaskManagers did not register with the new JobManager within 2 min: %v", n, err)
	}
}

// noOOM fails when a TaskManager log reports running out of heap or direct memory.
func noOOM(t *testing.T, root string) {
	t.Helper()
	run := envOr("HAADE_RUN", "/tmp/haade-services")
	logs, _ := filepath.Glob(filepath.Join(run, "flinkcluster", "log", "*taskexecutor*"))
	more, _ := filepath.Glob(filepath.Join(run, "logs", "flink-taskmanager-*.log"))
	oom := regexp.MustCompile(`OutOfMemoryError|Cannot reserve .* direct buffer memory`)
	for _, f := range append(logs, more...) {
		b, err := os.ReadFile(f)
		if err == nil && oom.Match(b) {
			t.Errorf("%s: %s", f, oom.Find(b))
		}
	}
}

// waitGone waits until no process runs the boot program.
func waitGone(t *testing.T, d time.Duration, boot string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := wait.Every(ctx, 2*time.Second, func() error {
		if out, _ := exec.Command("pgrep", "-f", "^"+boot+" ").Output(); len(strings.TrimSpace(string(out))) > 0 {
			return fmt.Errorf("%s", strings.Fields(string(out)))
		}
		return nil
	}); err != nil {
		t.Errorf("boot programs still running %v after the stop: %v", d, err)
	}
}

// workerCopies lists the boot program's copies of bin (/tmp/binNNN/worker) made since
// since: /tmp is shared with whatever else runs on the machine.
func workerCopies(bin string, since time.Time) []string {
	fi, err := os.Stat(bin)
	if err != nil {
		return nil
	}
	var out []string
	all, _ := filepath.Glob("/tmp/bin*/worker")
	for _, f := range all {
		if c, err := os.Stat(f); err == nil && c.Size() == fi.Size() && c.ModTime().After(since) {
			out = append(out, f)
		}
	}
	return out
}

func exportValue(t *testing.T, env, name string) string {
	t.Helper()
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, "export "+name+"="); ok {
			return v
		}
	}
	t.Fatalf("%s not in flinkcluster.sh env", name)
	return ""
}

// standalone starts Kafka, MinIO and the standalone Flink cluster
// (flinkcluster.sh, checkpoints on MinIO) and builds bronze's static
// binary, the PROCESS workers' --worker_binary, into dir. It returns the
// services, the worker command and Beam's boot program of the cluster.
func standalone(t *testing.T, root, s3Endpoint, dir string, start time.Time) (svc *services, workerCmd, boot, bin string) {
	t.Helper()
	svc = &services{t: t, root: root}
	svc.ensure("kafka", nil)
	svc.ensure("minio", nil)
	svc.ensure("flinkcluster", []string{"FLINK_CHECKPOINT_DIR=s3://warehouse/checkpoints/bronze", "FLINK_S3_ENDPOINT=" + s3Endpoint})
	t.Logf("services ready after %v", time.Since(start).Round(time.Second))
	clusterEnv, err := cmdtest.Script(svc.root, nil, "flinkcluster", "env")
	if err != nil {
		t.Fatalf("flinkcluster.sh env: %v", err)
	}
	// The worker binary: static, as the Dockerfile builds it (its packages
	// are those the image's build and the side-by-side harness compile).
	b := cmdtest.Static
	b.Nice = 10
	bins, err := b.Build(dir, filepath.Join(root, "pipelines/bronze"))
	if err != nil {
		t.Fatal(err)
	}
	bin = bins[0]
	t.Logf("bronze built after %v", time.Since(start).Round(time.Second))
	return svc, exportValue(t, clusterEnv, "HAADE_FLINK_WORKER_COMMAND"), exportValue(t, clusterEnv, "HAADE_FLINK_BOOT"), bin
}
