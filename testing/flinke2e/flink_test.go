//go:build e2e

package flinke2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/wait"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/tables"
)

// TestFlinkBronzeExactlyOnceE2E runs bronze on a real Apache Flink (Beam's Flink job server
// with its embedded Flink, testing/services/flink.sh), against real Kafka and MinIO:
//
//  1. a bounded run ingests the first events, malformed records and tombstones included;
//  2. an unbounded run ingests events produced while it runs, and is killed mid-stream
//     (the submitting process, which hosts the LOOPBACK worker, gets SIGKILL, and the
//     Flink job is cancelled through Flink's REST API) while the producer keeps writing;
//  3. a second unbounded run resumes from the tables' offsets, catches up with everything,
//     and is stopped with SIGINT (which cancels the job through the job server).
//
// After each step every produced Kafka offset must be in exactly one of the two tables,
// once: the distinct (partition, offset) pairs equal the produced ones and none repeats.
//
// HAADE_E2E_FLINK_WAREHOUSE=local uses a file warehouse instead of MinIO. The ports follow
// the scripts' own variables (KAFKA_PORT, MINIO_PORT, FLINK_JOB_PORT, FLINK_REST_PORTS), so
// that with HAADE_RUN and those set the test runs on a stack of its own.
func TestFlinkBronzeExactlyOnceE2E(t *testing.T) {
	start := time.Now()
	root := cmdtest.MustRepoRoot(t)
	useMinIO := os.Getenv("HAADE_E2E_FLINK_WAREHOUSE") != "local"
	s3Endpoint := "http://127.0.0.1:" + envOr("MINIO_PORT", "9000")

	svc := &services{t: t, root: root}
	svc.ensure("kafka", nil)
	flinkEnv := []string{}
	if useMinIO {
		svc.ensure("minio", nil)
		flinkEnv = append(flinkEnv, "FLINK_CHECKPOINT_DIR=s3://warehouse/checkpoints/bronze", "FLINK_S3_ENDPOINT="+s3Endpoint)
	}
	svc.ensure("flink", flinkEnv)
	t.Logf("services ready after %v", time.Since(start).Round(time.Second))

	dir := t.TempDir()
	bins, err := (cmdtest.Builder{Nice: 10}).Build(dir, filepath.Join(root, "pipelines/bronze"))
	if err != nil {
		t.Fatal(err)
	}
	bin := bins[0]
	t.Logf("bronze built after %v", time.Since(start).Round(time.Second))

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	brokers := []string{"127.0.0.1:" + envOr("KAFKA_PORT", "9092")}
	stamp := time.Now().UnixNano()
	topic := fmt.Sprintf("haade.e2e.flink.%d", stamp)
	const partitions = 4
	createTopic(ctx, t, brokers, topic, partitions)

	cat := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + filepath.Join(dir, "warehouse")}
	env := os.Environ()
	if useMinIO {
		cat.Warehouse = fmt.Sprintf("s3://warehouse/e2e-flink-%d/", stamp)
		cat.S3Endpoint = s3Endpoint
		creds := []string{"AWS_ACCESS_KEY_ID=minioadmin", "AWS_SECRET_ACCESS_KEY=minioadmin", "AWS_REGION=us-east-1"}
		env = append(env, creds...)
		for _, c := range creds {
			k, v, _ := strings.Cut(c, "=")
			t.Setenv(k, v) // for ScanRows in this process
		}
	}
	args := func(jobName string, extra ...string) []string {
		a := []string{"--runner=flink", "--endpoint=127.0.0.1:" + envOr("FLINK_JOB_PORT", "8099"), "--environment_type=LOOPBACK",
			"--job_name=" + jobName, "--brokers=" + strings.Join(brokers, ","), "--topic=" + topic,
			"--catalog=sql", "--catalog-uri=" + cat.URI, "--warehouse=" + cat.Warehouse,
			"--commit-interval=5s", "--metrics-addr=", "--pipeline-id=bronze-e2e-flink"}
		if cat.S3Endpoint != "" {
			a = append(a, "--s3-endpoint="+cat.S3Endpoint)
		}
		return append(a, extra...)
	}
	prod := &producer{t: t, brokers: brokers, topic: topic}

	// 1. Bounded: the first events, with malformed records and tombstones.
	prod.produce(ctx, 2000, 1, true)
	job := fmt.Sprintf("haadee2eflinkbounded%d", stamp)
	sub := submit(t, bin, args(job, "--bounded"), env, filepath.Join(dir, "bounded.log"))
	if err := sub.wait(5 * time.Minute); err != nil {
		sub.dump(t)
		t.Fatalf("bounded run: %v", err)
	}
	got := checkExactlyOnce(ctx, t, cat, prod.produced(), true)
	t.Logf("bounded run: %d bronze + %d dead letters, exactly once, after %v", got.bronze, got.dlq, time.Since(start).Round(time.Second))

	// 2. Unbounded, killed mid-stream while the producer keeps writing.
	job = fmt.Sprintf("haadee2eflinkfirst%d", stamp)
	sub = submit(t, bin, args(job), env, filepath.Join(dir, "unbounded1.log"))
	before := got.total()
	var wg sync.WaitGroup
	stopProducing := make(chan struct{})
	wg.Add(1)
	go func() { // a steady stream: 100 records every 500 ms
		defer wg.Done()
		for seed := uint64(100); ; seed++ {
			select {
			case <-stopProducing:
				return
			case <-time.After(500 * time.Millisecond):
			}
			prod.produce(ctx, 100, seed, seed%5 == 0)
		}
	}()
	// Wait until this run has committed something, then kill it.
	waitFor(ctx, t, 4*time.Minute, "the unbounded run's first commit", sub, func() bool {
		s, err := scan(ctx, cat)
		return err == nil && s.total() > before
	})
	mid, _ := scan(ctx, cat)
	t.Logf("unbounded run 1 committed %d rows; killing it mid-stream after %v", mid.total()-before, time.Since(start).Round(time.Second))
	sub.kill(t)
	cancelFlinkJob(ctx, t, job)
	time.Sleep(3 * time.Second) // records produced while nothing runs
	close(stopProducing)
	wg.Wait()
	prod.produce(ctx, 500, 999, true)

	// 3. Resubmit: it resumes from the tables' offsets and catches up.
	job = fmt.Sprintf("haadee2eflinksecond%d", stamp)
	sub = submit(t, bin, args(job), env, filepath.Join(dir, "unbounded2.log"))
	want := prod.produced()
	waitFor(ctx, t, 5*time.Minute, "every produced record in the tables", sub, func() bool {
		s, err := scan(ctx, cat)
		return err == nil && s.distinct() >= len(want)
	})
	sub.interrupt(t) // SIGINT: the submitter cancels the job through the job server
	if err := sub.wait(time.Minute); err != nil && !strings.Contains(err.Error(), "exit status 130") {
		t.Errorf("second unbounded run: %v", err)
	}
	cancelFlinkJob(ctx, t, job) // the job server's cancel does not stop an embedded Flink job
	got = checkExactlyOnce(ctx, t, cat, want, true)
	t.Logf("after the kill and the resubmission: %d bronze + %d dead letters = %d records produced, exactly once; took %v",
		got.bronze, got.dlq, len(want), time.Since(start).Round(time.Second))
}

// producer writes sample events to the topic and remembers how many went to each
// partition (a fresh topic without transactions: offsets 0..n-1).
type producer struct {
	t       *testing.T
	brokers []string
	topic   string
	mu      sync.Mutex
	count   int
}

// malformed are records that must become dead letters.
var malformed = [][]byte{
	[]byte(`{"source": "news", "title": "no timestamp"}`),
	[]byte(`{"source": "news", "title": "bad time", "timestamp": "yesterday"}`),
	[]byte(`not json at all`),
	[]byte(`{"source": 7, "title": "wrong type", "timestamp": "2026-05-19T10:00:00Z"}`),
	[]byte(`{"source": "a", "title": "b", "timestamp": "2026-05-19T10:00:00Z"} trailing`),
	[]byte(`[1, 2, 3]`),
}

func (p *producer) produce(ctx context.Context, n int, seed uint64, bad bool) {
	vals := kafkatest.Sample(n, seed, 0, nil)
	if bad {
		for i := 7; i < len(vals); i += 41 {
			vals[i] = malformed[(i/41)%len(malformed)]
		}
		vals = append(vals, nil) // a tombstone
	}
	if err := kafkatest.Produce(ctx, p.brokers, p.topic, vals); err != nil {
		p.t.Errorf("produce: %v", err)
		return
	}
	p.mu.Lock()
	p.count += len(vals)
	p.mu.Unlock()
}

// produced returns the produced (partition, offset) pairs, read from the broker's end offsets.
func (p *producer) produced() map[key]bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers...))
	if err != nil {
		p.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, p.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		p.t.Fatalf("list end offsets: %v", err)
	}
	want := map[key]bool{}
	ends.Each(func(o kadm.ListedOffset) {
		for off := int64(0); off < o.Offset; off++ {
			want[key{o.Partition, off}] = true
		}
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(want) != p.count {
		p.t.Fatalf("the topic holds %d offsets but %d records were produced", len(want), p.count)
	}
	return want
}

type key struct {
	partition int32
	offset    int64
}

type contents struct {
	bronze, dlq int
	seen        map[key]int
}

func (s contents) total() int    { return s.bronze + s.dlq }
func (s contents) distinct() int { return len(s.seen) }

func scan(ctx context.Context, cat icebergio.CatalogConfig) (contents, error) {
	var ev []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, cat, "lakehouse.bronze_events", &ev); err != nil {
		return contents{}, err
	}
	var dl []tables.DeadLetter
	if err := icebergio.ScanRows(ctx, cat, "lakehouse.bronze_events_dlq", &dl); err != nil {
		return contents{}, err
	}
	s := contents{bronze: len(ev), dlq: len(dl), seen: map[key]int{}}
	for _, e := range ev {
		s.seen[key{e.KafkaPartition, e.KafkaOffset}]++
	}
	for _, d := range dl {
		s.seen[key{d.KafkaPartition, d.KafkaOffset}]++
	}
	return s, nil
}

// checkExactlyOnce fails unless the tables hold every wanted offset exactly once and
// nothing else.
func checkExactlyOnce(ctx context.Context, t *testing.T, cat icebergio.CatalogConfig, want map[key]bool, needDLQ bool) contents {
	t.Helper()
	s, err := scan(ctx, cat)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	var missing, extra, dup int
	for k := range want {
		if s.seen[k] == 0 {
			missing++
		}
	}
	for k, n := range s.seen {
		if !want[k] {
			extra++
		}
		if n > 1 {
			dup++
		}
	}
	if missing+extra+dup > 0 || s.total() != len(want) {
		t.Fatalf("not exactly once: %d produced, %d bronze + %d dead letters; %d missing, %d unexpected, %d duplicated",
			len(want), s.bronze, s.dlq, missing, extra, dup)
	}
	if needDLQ && (s.dlq == 0 || s.bronze == 0) {
		t.Fatalf("want rows in both tables, got %d bronze and %d dead letters", s.bronze, s.dlq)
	}
	return s
}

func createTopic(ctx context.Context, t *testing.T, brokers []string, topic string, partitions int32) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			return
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = kadm.NewClient(cl).DeleteTopics(ctx, topic)
	})
}

// submitter is one run of the bronze binary.
type submitter struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func submit(t *testing.T, bin string, args, env []string, logPath string) *submitter {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &submitter{cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if t.Failed() {
			s.dump(t)
		}
	})
	return s
}

func (s *submitter) exited() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return true
	default:
		return false
	}
}

func (s *submitter) wait(d time.Duration) error {
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// kill ends the submitting process group at once: the LOOPBACK worker dies with it.
func (s *submitter) kill(t *testing.T) {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.wait(30 * time.Second)
}

func (s *submitter) interrupt(t *testing.T) { _ = s.cmd.Process.Signal(syscall.SIGINT) }

func (s *submitter) dump(t *testing.T) {
	b, _ := os.ReadFile(s.log)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	t.Logf("----- end of %s -----\n%s", s.log, b)
}

// waitFor polls cond every 3 s until it holds, failing after d or when the submitter exits.
func waitFor(ctx context.Context, t *testing.T, d time.Duration, what string, s *submitter, cond func() bool) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := wait.Every(wctx, 3*time.Second, func() error {
		if cond() {
			return nil
		}
		if s.exited() {
			s.dump(t)
			t.Fatalf("waiting for %s: the submitter exited: %v", what, s.wait(time.Second))
		}
		return errors.New("not yet")
	}); err != nil {
		s.dump(t)
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// flinkRESTs are the REST APIs that Flink clusters of this test may listen on: Beam's
// [local] master starts one MiniCluster per job, and flink.sh gives its REST endpoint the
// first free port of FLINK_REST_PORTS (8081-8089).
func flinkRESTs() []*runners.FlinkREST {
	var out []*runners.FlinkREST
	for _, base := range runners.LoopbackFlinkRESTs(os.Getenv("FLINK_REST_PORTS")) {
		out = append(out, &runners.FlinkREST{Base: base, Client: &http.Client{Timeout: 3 * time.Second}})
	}
	return out
}

// cancelFlinkJob cancels the Flink job that runs the Beam job jobName and waits until it has
// stopped. The Beam job server's Cancel ends only its own invocation: with the embedded
// Flink the Flink job keeps running (and restarting without its LOOPBACK worker).
func cancelFlinkJob(ctx context.Context, t *testing.T, jobName string) {
	t.Helper()
	// Poll rather than wait on each job: a MiniCluster ends with its job, and its REST API
	// with it, so a job that went away with its cluster counts as stopped.
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := wait.Every(wctx, 2*time.Second, func() error {
		active := 0
		for _, rest := range flinkRESTs() {
			jobs, err := rest.ActiveJobs(ctx, jobName)
			if err != nil {
				continue // no cluster on this port
			}
			for _, j := range jobs {
				active++
				_ = rest.RequestCancel(ctx, j.ID) // the next round sees whether it stopped
			}
		}
		if active > 0 {
			return fmt.Errorf("%d jobs active", active)
		}
		return nil
	}); err != nil {
		t.Fatalf("the Flink job of %s did not stop within 90 s: %v", jobName, err)
	}
}

// services starts what the test needs through testing/services and stops, at the end, what
// it started (unless HAADE_KEEP_SERVICES=1).
type services struct {
	t    *testing.T
	root string
}

func (s *services) ensure(name string, env []string) {
	s.t.Helper()
	if _, err := cmdtest.Script(s.root, env, name, "status"); err == nil {
		return // running already: leave it running
	}
	if _, err := cmdtest.Script(s.root, env, name, "start"); err != nil {
		s.t.Fatal(err)
	}
	if os.Getenv("HAADE_KEEP_SERVICES") == "1" {
		return
	}
	s.t.Cleanup(func() {
		if _, err := cmdtest.Script(s.root, env, name, "stop"); err != nil {
			s.t.Log(err)
		}
	})
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
