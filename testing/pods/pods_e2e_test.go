//go:build pods

package pods

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
)

// The batches: before the submission, while a TaskManager is killed, and
// after the submit pod is recreated.
const (
	firstBatch  = 3000
	secondBatch = 6000
	secondRate  = 150 // events/s: the batch spans the kill and the restart
	thirdBatch  = 1000
)

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// skipUnlessReady skips with the reason when this machine cannot run the pods.
func skipUnlessReady(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the pods need root (rootful podman, network namespaces)")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed: testing/cluster/images.sh setup")
	}
	for _, img := range []string{"haade", "haade-kafka", "haade-minio", "haade-postgres", "haade-flink", "haade-jobserver"} {
		if err := exec.Command("podman", "image", "exists", "localhost/"+img+":dev").Run(); err != nil {
			t.Skipf("no image localhost/%s:dev: run testing/cluster/images.sh build", img)
		}
	}
}

// pods runs testing/cluster/pods.sh with args and returns its stdout.
func pods(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "testing/cluster/pods.sh"), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if l != "" && !strings.Contains(l, "failed to connect to syslog") {
			t.Logf("pods.sh %s: %s", args[0], l)
		}
	}
	if err != nil {
		return out.String(), fmt.Errorf("pods.sh %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}

func mustPods(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	out, err := pods(t, timeout, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func parseEnv(s string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m
}

// flink is the JobManager's REST API, published on 127.0.0.1.
type flink struct{ rest *runners.FlinkREST }

func (f flink) get(path string, out any) error {
	return f.rest.Get(context.Background(), path, out)
}

type job struct {
	ID    string         `json:"jid"`
	Name  string         `json:"name"`
	State string         `json:"state"`
	Start int64          `json:"start-time"`
	Tasks map[string]int `json:"tasks"`
}

func (f flink) jobs(t *testing.T) []job {
	t.Helper()
	var body struct {
		Jobs []job `json:"jobs"`
	}
	if err := f.get("/jobs/overview", &body); err != nil {
		t.Fatalf("Flink REST: %v", err)
	}
	sort.Slice(body.Jobs, func(i, j int) bool { return body.Jobs[i].Start < body.Jobs[j].Start })
	return body.Jobs
}

type checkpoints struct {
	Counts struct {
		Restored  int `json:"restored"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"counts"`
	Latest struct {
		Completed *struct {
			ID           int64  `json:"id"`
			ExternalPath string `json:"external_path"`
		} `json:"completed"`
		Restored *struct {
			ID           int64  `json:"id"`
			ExternalPath string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
}

func (f flink) checkpoints(t *testing.T, jid string) checkpoints {
	t.Helper()
	var c checkpoints
	if err := f.get("/jobs/"+jid+"/checkpoints", &c); err != nil {
		t.Fatalf("Flink REST: %v", err)
	}
	return c
}

// waitFor polls cond every 2 s until it holds, or fails with what it last said.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last string
	for {
		ok, s := cond()
		if ok {
			t.Logf("%s (%s)", what, s)
			return
		}
		last = s
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, d, last)
		}
		time.Sleep(2 * time.Second)
	}
}

// runningJob waits for the one RUNNING Flink job with every task RUNNING.
func (f flink) runningJob(t *testing.T, d time.Duration, what string) job {
	t.Helper()
	var got job
	waitFor(t, d, what, func() (bool, string) {
		var running []job
		for _, j := range f.jobs(t) {
			if j.State == "RUNNING" {
				running = append(running, j)
			}
		}
		if len(running) != 1 {
			return false, fmt.Sprintf("%d RUNNING jobs", len(running))
		}
		got = running[0]
		return got.Tasks["running"] == got.Tasks["total"], fmt.Sprintf("job %s: %d of %d tasks running", got.ID, got.Tasks["running"], got.Tasks["total"])
	})
	return got
}

type offset struct {
	Partition int32
	Offset    int64
}

// table reads lakehouse.bronze_events through the catalog (PostgreSQL) and
// the warehouse (MinIO), as the pipeline's own identities.
func table(t *testing.T, env map[string]string) (catalog.Catalog, func() []tables.BronzeEvent) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", env["PODS_AWS_ACCESS_KEY_ID"])
	t.Setenv("AWS_SECRET_ACCESS_KEY", env["PODS_AWS_SECRET_ACCESS_KEY"])
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv(icebergio.EnvCatalogPassword, env["PODS_CATALOG_PASSWORD"])
	cfg := icebergio.CatalogConfig{URI: env["PODS_CATALOG_URI"], Warehouse: "s3://warehouse/", S3Endpoint: env["PODS_S3_ENDPOINT"]}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := cfg.Open(ctx)
	if err != nil {
		t.Fatalf("open the catalog: %v", err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	ident := env["PODS_TABLE"]
	return cat, func() []tables.BronzeEvent {
		if _, err := cat.LoadTable(context.Background(), mustIdent(t, ident)); err != nil {
			return nil
		}
		return icebergtest.Rows[tables.BronzeEvent](t, cat, ident)
	}
}

func mustIdent(t *testing.T, s string) []string {
	id, err := icebergio.Identifier(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// exactlyOnce checks that rows hold every offset of the topic once: want
// records in all, no (partition, offset) twice, and each partition's
// offsets 0..n-1 (produce is not transactional: no gaps).
func exactlyOnce(rows []tables.BronzeEvent, topic string, want int) (bool, string) {
	seen := map[offset]int{}
	per := map[int32][]int64{}
	for _, r := range rows {
		if r.KafkaTopic != topic {
			return false, fmt.Sprintf("a row from topic %q", r.KafkaTopic)
		}
		k := offset{r.KafkaPartition, r.KafkaOffset}
		seen[k]++
		if seen[k] == 1 {
			per[r.KafkaPartition] = append(per[r.KafkaPartition], r.KafkaOffset)
		}
	}
	var dups []offset
	for k, n := range seen {
		if n > 1 {
			dups = append(dups, k)
		}
	}
	if len(dups) > 0 {
		return false, fmt.Sprintf("%d rows, %d (partition, offset) twice or more, e.g. %v", len(rows), len(dups), dups[0])
	}
	for p, offs := range per {
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		if offs[0] != 0 || offs[len(offs)-1] != int64(len(offs)-1) {
			return false, fmt.Sprintf("partition %d: offsets %d..%d for %d rows (a gap)", p, offs[0], offs[len(offs)-1], len(offs))
		}
	}
	return len(rows) == want, fmt.Sprintf("%d rows of %d, each offset once, in %d partitions", len(rows), want, len(per))
}

func TestPodsBronze(t *testing.T) {
	skipUnlessReady(t)
	t0 := time.Now()
	_, _ = pods(t, 5*time.Minute, "down")
	if os.Getenv("PODS_KEEP") == "" {
		t.Cleanup(func() { _, _ = pods(t, 5*time.Minute, "down") })
	}
	mustPods(t, 15*time.Minute, "up")
	t.Logf("the pods are up in %v", time.Since(t0).Round(time.Second))
	env := parseEnv(mustPods(t, time.Minute, "env"))
	topic := env["PODS_TOPIC"]
	fl := flink{rest: &runners.FlinkREST{Base: env["PODS_FLINK_REST"]}}
	if jobs := fl.jobs(t); len(jobs) != 0 {
		t.Fatalf("a new cluster already has Flink jobs: %+v", jobs)
	}

	// 1. Produce, then submit: the submit pod exits 0 (--async) with the job RUNNING.
	mustPods(t, 5*time.Minute, "produce", "--topic="+topic, "--count="+fmt.Sprint(firstBatch), "--seed=1")
	tSubmit := time.Now()
	submit(t, env, 1)
	t.Logf("bronze-submit exited 0 in %v", time.Since(tSubmit).Round(time.Second))
	log1, err := os.ReadFile(filepath.Join(env["PODS_STATE"], "submit-1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log1), "--async: the Flink job runs; returning") {
		t.Fatalf("the submit pod exited 0 without --async's word that the job runs:\n%s", log1)
	}
	// The artifact endpoint the job server advertised is its pod's IP, not 0.0.0.0.
	if !strings.Contains(string(log1), `"artifact_endpoint":"10.`) {
		t.Errorf("the job server's artifact endpoint is not a pod address:\n%s", log1)
	}
	for _, secret := range []string{env["PODS_CATALOG_PASSWORD"], env["PODS_AWS_SECRET_ACCESS_KEY"]} {
		if secret != "" && strings.Contains(string(log1), secret) {
			t.Errorf("the submit pod's log holds a secret")
		}
	}
	j1 := fl.runningJob(t, 10*time.Minute, "the Flink job runs every task")
	_, rows := table(t, env)
	waitFor(t, 10*time.Minute, "the first batch landed exactly once", func() (bool, string) {
		return exactlyOnce(rows(), topic, firstBatch)
	})

	// 2. A completed checkpoint on S3, then kill a TaskManager pod while producing.
	waitFor(t, 5*time.Minute, "a checkpoint completed on S3", func() (bool, string) {
		c := fl.checkpoints(t, j1.ID)
		if c.Latest.Completed == nil {
			return false, fmt.Sprintf("%+v", c.Counts)
		}
		return strings.HasPrefix(c.Latest.Completed.ExternalPath, "s3://warehouse/checkpoints/bronze/"), c.Latest.Completed.ExternalPath
	})
	before := fl.checkpoints(t, j1.ID)
	produced := make(chan error, 1)
	go func() {
		_, err := pods(t, 10*time.Minute, "produce", "--topic="+topic, "--count="+fmt.Sprint(secondBatch),
			fmt.Sprintf("--rate=%d", secondRate), "--seed=2")
		produced <- err
	}()
	time.Sleep(10 * time.Second)
	mustPods(t, time.Minute, "kill", "taskmanager-1")
	t.Logf("killed the pod taskmanager-1 (checkpoint %d completed before)", before.Latest.Completed.ID)
	time.Sleep(15 * time.Second)
	mustPods(t, 2*time.Minute, "start", "taskmanager-1")
	t.Log("started the pod taskmanager-1 again")
	if err := <-produced; err != nil {
		t.Fatalf("producing during the kill: %v", err)
	}
	j2 := fl.runningJob(t, 15*time.Minute, "the Flink job runs every task again after the kill")
	if j2.ID != j1.ID {
		t.Fatalf("after the kill the Flink job is %s, not %s: Flink should have restarted the job, not a new one", j2.ID, j1.ID)
	}
	waitFor(t, 5*time.Minute, "Flink restored the job from its S3 checkpoint", func() (bool, string) {
		c := fl.checkpoints(t, j1.ID)
		if c.Latest.Restored == nil {
			return false, fmt.Sprintf("no restore yet: %+v", c.Counts)
		}
		return c.Counts.Restored > before.Counts.Restored && c.Latest.Restored.ID >= before.Latest.Completed.ID &&
				strings.HasPrefix(c.Latest.Restored.ExternalPath, "s3://warehouse/checkpoints/bronze/"),
			fmt.Sprintf("restored %d times, last checkpoint %d from %s", c.Counts.Restored, c.Latest.Restored.ID, c.Latest.Restored.ExternalPath)
	})
	waitFor(t, 15*time.Minute, "both batches landed exactly once after the kill", func() (bool, string) {
		return exactlyOnce(rows(), topic, firstBatch+secondBatch)
	})

	// 3. Delete and recreate the submit pod: it exits 0 and no second Flink job starts.
	jobsBefore := fl.jobs(t)
	mustPods(t, time.Minute, "delete-submit")
	submit(t, env, 2)
	log2, err := os.ReadFile(filepath.Join(env["PODS_STATE"], "submit-2.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log2), "the Flink job already runs: not submitting a second one") {
		t.Errorf("the recreated submit pod did not find the running job:\n%s", log2)
	}
	ids := func(js []job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.ID+" "+j.State)
		}
		return out
	}
	if diff := cmp.Diff(ids(jobsBefore), ids(fl.jobs(t))); diff != "" {
		t.Errorf("the recreated submit pod changed Flink's jobs (-before +after):\n%s", diff)
	}
	mustPods(t, 5*time.Minute, "produce", "--topic="+topic, "--count="+fmt.Sprint(thirdBatch), "--seed=3")
	waitFor(t, 10*time.Minute, "every record landed exactly once at the end", func() (bool, string) {
		return exactlyOnce(rows(), topic, firstBatch+secondBatch+thirdBatch)
	})
	if j := fl.runningJob(t, time.Minute, "still one Flink job"); j.ID != j1.ID {
		t.Errorf("the running job is %s, want %s", j.ID, j1.ID)
	}
	// Nothing went to the dead-letter table: every event was well formed.
	if dlq := icebergtest.Rows[tables.DeadLetter](t, mustCatalog(t, env), env["PODS_DLQ_TABLE"]); len(dlq) != 0 {
		t.Errorf("%d dead letters, want 0; first: %s", len(dlq), dlq[0].Error)
	}
	t.Logf("the whole run took %v", time.Since(t0).Round(time.Second))
}

// submit runs the n-th submit pod; when it fails, the test fails with its
// log and the ends of the job server's and the JobManager's.
func submit(t *testing.T, env map[string]string, n int) {
	t.Helper()
	if _, err := pods(t, 10*time.Minute, "submit"); err != nil {
		b, _ := os.ReadFile(filepath.Join(env["PODS_STATE"], fmt.Sprintf("submit-%d.log", n)))
		t.Logf("the submit pod's log:\n%s", b)
		for _, c := range []string{"haade-pod-beam-jobserver-jobserver", "haade-pod-jobmanager-flink-main-container"} {
			out, _ := exec.Command("podman", "logs", "--tail", "40", c).CombinedOutput()
			t.Logf("podman logs %s:\n%s", c, out)
		}
		t.Fatal(err)
	}
}

func mustCatalog(t *testing.T, env map[string]string) catalog.Catalog {
	cat, _ := table(t, env)
	return cat
}
