//go:build e2e

package flinke2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/tables"
)

// TestFlinkSubmitE2E checks what a submission to the standalone cluster
// (testing/services/flinkcluster.sh: two TaskManagers of 4 slots) tells its
// user, with PROCESS workers:
//
//   - SlotsAbove: --parallelism above the free slots with --async exits non-zero with one line
//     naming the slots and --parallelism, and leaves no job running;
//   - DefaultFits: without --parallelism, a topic of more partitions than free slots gets the
//     free slots as parallelism, and --async returns with every task RUNNING;
//   - AgainWithoutREST: the same --async submission without --flink-rest asks the job server,
//     says the job runs, exits 0 and starts no second job;
//   - RelativeCatalog: bronze with the default, relative --catalog-uri and --warehouse lands its
//     rows in the catalog of the directory it was started in (the workers run in the job
//     server's); with EXTERNAL workers the same command is refused in one line naming the flag;
//   - RoutedUpserts: --topic=a,b --route --upsert, bounded, twice: topic a's keys are routed by
//     a member to two tables and move between them, b's to a table of its own; after each run
//     every table holds the latest event of each of its keys, once, and no deleted key.
func TestFlinkSubmitE2E(t *testing.T) {
	start := time.Now()
	root := cmdtest.MustRepoRoot(t)
	s3Endpoint := "http://127.0.0.1:" + envOr("MINIO_PORT", "9000")
	restURL := "http://127.0.0.1:" + envOr("FLINKC_REST_PORT", "8081")
	endpoint := "127.0.0.1:" + envOr("FLINK_JOB_PORT", "8099")

	dir := t.TempDir()
	_, workerCmd, boot, bin := standalone(t, root, s3Endpoint, dir, start)

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	rest, err := runners.NewFlinkREST(restURL)
	if err != nil {
		t.Fatal(err)
	}
	waitTaskManagers(ctx, t, rest, 2)
	room, err := rest.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !room.Fixed() || room.SlotsFree < 2 {
		t.Fatalf("the standalone cluster: %s; want a fixed cluster with free slots (is another job running?)", room)
	}
	t.Logf("the cluster: %s", room)

	brokers := []string{"127.0.0.1:" + envOr("KAFKA_PORT", "9092")}
	stamp := time.Now().UnixNano()
	envCfg, _ := json.Marshal(map[string]any{"command": workerCmd, "env": map[string]string{
		"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1",
		"HAADE_FLINK_BOOT": boot,
	}})
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=minioadmin", "AWS_SECRET_ACCESS_KEY=minioadmin", "AWS_REGION=us-east-1")
	flinkArgs := func(job, topic string, extra ...string) []string {
		return append([]string{"--runner=flink", "--endpoint=" + endpoint,
			"--environment_type=PROCESS", "--environment_config=" + string(envCfg), "--worker_binary=" + bin,
			"--job_name=" + job, "--brokers=" + strings.Join(brokers, ","), "--topic=" + topic,
			"--commit-interval=2s", "--metrics-addr="}, extra...)
	}
	// A topic of more partitions than the free slots, tables on MinIO.
	wide := fmt.Sprintf("haade.e2e.flinksubmit.%d", stamp)
	widePartitions := int32(room.SlotsFree + 4)
	createTopic(ctx, t, brokers, wide, widePartitions)
	catalog := []string{"--catalog=sql", "--catalog-uri=" + filepath.Join(dir, "catalog.db"),
		"--warehouse=" + fmt.Sprintf("s3://warehouse/e2e-flinksubmit-%d/", stamp), "--s3-endpoint=" + s3Endpoint,
		"--pipeline-id=bronze-e2e-flinksubmit"}
	job := fmt.Sprintf("haadee2esubmit%d", stamp)

	// As many readers as partitions, more than the free slots: the
	// default parallelism is the free slots (--kafka-readers' default, 8,
	// would cap it at 8 groups first).
	wideArgs := func(name string) []string {
		return append(flinkArgs(name, wide, catalog...), fmt.Sprintf("--kafka-readers=%d", widePartitions))
	}
	t.Run("SlotsAbove", func(t *testing.T) {
		p := room.SlotsTotal + 4
		sub := submit(t, bin, append(wideArgs(job+"x"), "--flink-rest="+restURL, "--async", fmt.Sprintf("--parallelism=%d", p)),
			env, filepath.Join(dir, "slots-above.log"))
		err := sub.wait(5 * time.Minute)
		if err == nil {
			sub.dump(t)
			t.Fatalf("--parallelism=%d on %d free slots: exit 0, want non-zero", p, room.SlotsFree)
		}
		lines := commandLines(t, sub.log, "bronze: ")
		if len(lines) != 1 || !strings.Contains(lines[0], "slots") || !strings.Contains(lines[0], "--parallelism") ||
			!strings.Contains(lines[0], fmt.Sprintf("parallelism %d needs %d slots", p, p)) {
			sub.dump(t)
			t.Fatalf("want one line naming the slots and --parallelism, got %q", lines)
		}
		if jobs := activeJobs(ctx, t, rest, job+"x"); len(jobs) != 0 {
			t.Fatalf("after the refusal: active Flink jobs %v, want none", jobs)
		}
		t.Logf("%v: %s", err, lines[0])
	})

	var flinkJob string
	t.Run("DefaultFits", func(t *testing.T) {
		t0 := time.Now()
		sub := submit(t, bin, append(wideArgs(job), "--flink-rest="+restURL, "--async"), env, filepath.Join(dir, "default.log"))
		if err := sub.wait(8 * time.Minute); err != nil {
			sub.dump(t)
			t.Fatalf("--async with the default parallelism: %v, want exit 0", err)
		}
		running := activeJobs(ctx, t, rest, job)
		if len(running) != 1 {
			t.Fatalf("after --async: Flink jobs %v, want one", running)
		}
		flinkJob = running[0].ID
		d, err := rest.Job(ctx, flinkJob)
		if err != nil {
			t.Fatal(err)
		}
		if !d.AllRunning() {
			states, _ := d.TaskStates()
			t.Fatalf("--async returned with tasks %s, want every task RUNNING", states)
		}
		if d.Parallelism() != room.SlotsFree {
			t.Errorf("parallelism %d for %d partitions on %d free slots, want %d", d.Parallelism(), widePartitions, room.SlotsFree, room.SlotsFree)
		}
		if b, _ := os.ReadFile(sub.log); !strings.Contains(string(b), fmt.Sprintf("flink_parallelism=%d", room.SlotsFree)) ||
			!strings.Contains(string(b), "free slots, fewer than the") {
			sub.dump(t)
			t.Errorf("the run's log does not say which parallelism it used, and why")
		}
		t.Logf("--async returned after %v; Flink job %s: parallelism %d, every task RUNNING", time.Since(t0).Round(time.Second), flinkJob, d.Parallelism())
	})

	t.Run("AgainWithoutREST", func(t *testing.T) {
		if flinkJob == "" {
			t.Fatal("DefaultFits left no job to submit again")
		}
		sub := submit(t, bin, append(wideArgs(job), "--async"), env, filepath.Join(dir, "again.log"))
		if err := sub.wait(3 * time.Minute); err != nil {
			sub.dump(t)
			t.Fatalf("second submission without --flink-rest: %v, want exit 0", err)
		}
		if b, _ := os.ReadFile(sub.log); !strings.Contains(string(b), "already runs") {
			sub.dump(t)
			t.Errorf("second submission: no line saying the job already runs")
		}
		if again := activeJobs(ctx, t, rest, job); len(again) != 1 || again[0].ID != flinkJob {
			t.Fatalf("after a second submission without --flink-rest: Flink jobs %v, want only %s", again, flinkJob)
		}
		stop := submit(t, bin, append(wideArgs(job), "--flink-rest="+restURL, "--cancel"), env, filepath.Join(dir, "cancel.log"))
		if err := stop.wait(3 * time.Minute); err != nil {
			stop.dump(t)
			t.Fatalf("--cancel: %v", err)
		}
		if jobs := activeJobs(ctx, t, rest, job); len(jobs) != 0 {
			t.Fatalf("after --cancel: %v still active", jobs)
		}
	})

	t.Run("RelativeCatalog", func(t *testing.T) {
		// The cancelled job's slots come back before the room is asked for.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := wait.Every(wctx, time.Second, func() error {
			c, err := rest.Capacity(ctx)
			if err == nil && c.SlotsFree < room.SlotsFree {
				err = fmt.Errorf("%s", c)
			}
			return err
		}); err != nil {
			t.Fatalf("the cluster's free slots did not come back within a minute: %v", err)
		}
		topic := fmt.Sprintf("haade.e2e.flinkpaths.%d", stamp)
		createTopic(ctx, t, brokers, topic, 4)
		prod := &producer{t: t, brokers: brokers, topic: topic}
		prod.produce(ctx, 1000, 7, true)
		work := filepath.Join(dir, "work")
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		pathsJob := fmt.Sprintf("haadee2epaths%d", stamp)
		// Workers elsewhere: the default relative catalog is refused, naming the flag.
		ext := submitIn(t, work, bin, []string{"--runner=flink", "--endpoint=" + endpoint, "--environment_type=EXTERNAL",
			"--environment_config=127.0.0.1:1", "--job_name=" + pathsJob, "--brokers=" + strings.Join(brokers, ","), "--topic=" + topic,
			"--bounded", "--metrics-addr="}, env, filepath.Join(dir, "external.log"))
		err := ext.wait(time.Minute)
		if lines := commandLines(t, ext.log, "bronze: "); err == nil || len(lines) != 1 || !strings.Contains(lines[0], "--catalog-uri=lakehouse/catalog.db") {
			ext.dump(t)
			t.Fatalf("EXTERNAL workers with the default catalog: %v, lines %q; want a refusal naming --catalog-uri", err, lines)
		}
		// Workers here (PROCESS, started in the job server's directory): the rows land in the
		// catalog of the directory bronze was started in.
		sub := submitIn(t, work, bin, append(flinkArgs(pathsJob, topic), "--flink-rest="+restURL, "--bounded",
			"--pipeline-id=bronze-e2e-flinkpaths"), env, filepath.Join(dir, "relative.log"))
		if err := sub.wait(10 * time.Minute); err != nil {
			sub.dump(t)
			t.Fatalf("bounded run with the default catalog: %v", err)
		}
		if b, _ := os.ReadFile(sub.log); !strings.Contains(string(b), "on Flink with parallelism 4: the partition count") {
			sub.dump(t)
			t.Errorf("the summary does not say which parallelism was used")
		}
		cat := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(work, "lakehouse", "catalog.db"),
			Warehouse: filepath.Join(work, "lakehouse", "warehouse")}
		got := checkExactlyOnce(ctx, t, cat, prod.produced(), true)
		t.Logf("default catalog: %d bronze + %d dead letters in %s, exactly once", got.bronze, got.dlq, cat.URI)
	})

	t.Run("RoutedUpserts", func(t *testing.T) {
		a, b := fmt.Sprintf("haade.e2e.flinkroute.a.%d", stamp), fmt.Sprintf("haade.e2e.flinkroute.b.%d", stamp)
		createTopic(ctx, t, brokers, a, 3)
		createTopic(ctx, t, brokers, b, 2)
		routes := "kafka_topic=" + a + "&type=rating|outlook:lakehouse.flinkroute_{type}, kafka_topic=" + b + ":lakehouse.flinkroute_b"
		routeCat := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "route.db"),
			Warehouse: fmt.Sprintf("s3://warehouse/e2e-flinkroute-%d/", stamp), S3Endpoint: s3Endpoint}
		args := append(flinkArgs(fmt.Sprintf("haadee2eroute%d", stamp), a+","+b), "--flink-rest="+restURL, "--bounded",
			"--route="+routes, "--upsert", "--pipeline-id=bronze-e2e-flinkroute",
			"--catalog=sql", "--catalog-uri="+routeCat.URI, "--warehouse="+routeCat.Warehouse, "--s3-endpoint="+s3Endpoint)
		for _, kv := range []string{"AWS_ACCESS_KEY_ID=minioadmin", "AWS_SECRET_ACCESS_KEY=minioadmin", "AWS_REGION=us-east-1"} {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v) // for ScanRows in this process: the tables are on MinIO
		}
		truth := map[string]map[string]string{} // table -> key -> title
		for round := range 2 {
			produceRouted(ctx, t, brokers, a, b, round, truth)
			sub := submit(t, bin, args, env, filepath.Join(dir, fmt.Sprintf("route-%d.log", round)))
			if err := sub.wait(10 * time.Minute); err != nil {
				sub.dump(t)
				t.Fatalf("round %d: bounded routed upsert run: %v", round, err)
			}
			for _, table := range []string{"lakehouse.flinkroute_rating", "lakehouse.flinkroute_outlook", "lakehouse.flinkroute_b"} {
				got := liveKeys(ctx, t, routeCat, table)
				want := truth[table]
				if want == nil {
					want = map[string]string{}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("round %d: %s, key -> title (-want +got):\n%s", round, table, diff)
				}
			}
		}
		t.Logf("routed upserts on Flink: %d, %d and %d live keys after two bounded runs",
			len(truth["lakehouse.flinkroute_rating"]), len(truth["lakehouse.flinkroute_outlook"]), len(truth["lakehouse.flinkroute_b"]))
	})
}

// produceRouted produces keyed events to topics a and b for RoutedUpserts
// and updates truth, the live title of each key of each table: a's 240
// events over 30 keys whose type alternates at each of a key's updates
// (so keys move between the rating and outlook tables: a round ends with
// every live key of a in outlook, the next in rating), every 11th a
// tombstone; b's 90 over 15 keys, every 7th a tombstone.
func produceRouted(ctx context.Context, t *testing.T, brokers []string, a, b string, round int, truth map[string]map[string]string) {
	t.Helper()
	set := func(table, key, title string) { // a key of a lives in one of a's tables
		delete(truth["lakehouse.flinkroute_rating"], key)
		delete(truth["lakehouse.flinkroute_outlook"], key)
		if title == "" {
			return
		}
		if truth[table] == nil {
			truth[table] = map[string]string{}
		}
		truth[table][key] = title
	}
	var keys, values [][]byte
	for i := range 240 {
		key := fmt.Sprintf("issuer-%d", (i*7+round)%30)
		if (i+round)%11 == 0 {
			keys, values = append(keys, []byte(key)), append(values, nil)
			set("", key, "")
			continue
		}
		typ := []string{"rating", "outlook"}[(i/30+round)%2]
		title := fmt.Sprintf("%s %d.%d", typ, round, i)
		keys = append(keys, []byte(key))
		values = append(values, fmt.Appendf(nil, `{"source":"agency","title":%q,"timestamp":"2026-05-19T10:00:00Z","type":%q}`, title, typ))
		set("lakehouse.flinkroute_"+typ, key, title)
	}
	if err := kafkatest.ProduceKeyed(ctx, brokers, a, keys, values); err != nil {
		t.Fatal(err)
	}
	keys, values = nil, nil
	for i := range 90 {
		// b's keys are the same names as a's: each topic's keys are its own.
		key := fmt.Sprintf("issuer-%d", (i*4+round)%15)
		keys = append(keys, []byte(key))
		if (i+round)%7 == 0 {
			values = append(values, nil)
			delete(truth["lakehouse.flinkroute_b"], key)
			continue
		}
		title := fmt.Sprintf("b %d.%d", round, i)
		values = append(values, fmt.Appendf(nil, `{"source":"ledger","title":%q,"timestamp":"2026-05-19T10:00:00Z"}`, title))
		if truth["lakehouse.flinkroute_b"] == nil {
			truth["lakehouse.flinkroute_b"] = map[string]string{}
		}
		truth["lakehouse.flinkroute_b"][key] = title
	}
	if err := kafkatest.ProduceKeyed(ctx, brokers, b, keys, values); err != nil {
		t.Fatal(err)
	}
}

// liveKeys reads a routed upsert table: key -> title, failing on a key
// that is live twice.
func liveKeys(ctx context.Context, t *testing.T, cat icebergio.CatalogConfig, table string) map[string]string {
	t.Helper()
	var evs []tables.BronzeEvent
	if err := icebergio.ScanRows(ctx, cat, table, &evs); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	got := map[string]string{}
	for _, ev := range evs {
		if _, dup := got[string(ev.KafkaKey)]; dup {
			t.Errorf("%s: key %s is live twice", table, ev.KafkaKey)
		}
		got[string(ev.KafkaKey)] = *ev.Title
	}
	return got
}

// commandLines returns the lines of a command's output that start with
// prefix: its own messages, not the log lines (which start with time=).
func commandLines(t *testing.T, log, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// submitIn is submit with the command started in dir.
func submitIn(t *testing.T, dir, bin string, args, env []string, logPath string) *submitter {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
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
	})
	return s
}
