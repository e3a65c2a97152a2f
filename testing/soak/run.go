package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Report is soak.json.
type Report struct {
	Command    string   `json:"command"`
	Start      string   `json:"start"`
	Rate       float64  `json:"rate"`
	Partitions int      `json:"partitions"`
	Interval   string   `json:"interval"`
	Warmup     string   `json:"warmup"`
	SDFPatch   string   `json:"sdf_patch"`
	Samples    []Sample `json:"samples"`
	Checkpoint Fit      `json:"checkpoint_fit"`
	Heap       Fit      `json:"heap_fit"`
	Failures   []string `json:"failures"`
	// Interrupted says the run stopped before --duration (SIGINT or SIGTERM).
	Interrupted bool `json:"interrupted,omitempty"`
}

type env struct {
	cfg                  Config
	root, out            string
	bins                 map[string]string
	brokers, topic       string
	catalogURI, wareh    string
	restURL, jobID       string
	jvmPID               int
	kafka                *kgo.Client
	procs                []*proc
	startedFlinkEmbedded bool
}

func run(ctx context.Context, cfg Config) (rep Report, err error) {
	e := &env{cfg: cfg}
	if e.root, err = cmdtest.RepoRoot(); err != nil {
		return rep, err
	}
	e.out = cfg.Out
	if e.out == "" {
		base := os.Getenv("HAADE_RUN")
		if base == "" {
			base = "/tmp/haade-services"
		}
		e.out = filepath.Join(base, "soak-"+time.Now().UTC().Format("20060102T150405"))
	}
	if err := os.MkdirAll(e.out, 0o755); err != nil {
		return rep, err
	}
	defer e.tearDown()
	if err := e.setUp(ctx); err != nil {
		return rep, err
	}
	// Whether the job server runs flink/sdfstate: its command line, when soak started it.
	patch := "unknown (a job server soak did not start)"
	if e.startedFlinkEmbedded {
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", e.jvmPID)); err == nil {
			patch = "off (stock Beam classes)"
			if strings.Contains(string(cmdline), "haade-sdfstate.jar") {
				patch = "on (haade-sdfstate.jar on the class path)"
			}
		}
	}
	logf("flink/sdfstate patch: %s", patch)
	rep = Report{
		Command: "go run ./testing/soak " + strings.Join(os.Args[1:], " "),
		Start:   time.Now().UTC().Format(time.RFC3339), Rate: cfg.Rate, Partitions: cfg.Partitions,
		Interval: cfg.Interval.String(), Warmup: cfg.Warmup.String(), SDFPatch: patch,
	}
	err = e.soak(ctx, &rep)
	if werr := writeReport(e.out, rep); werr != nil && err == nil {
		err = werr
	}
	logf("figures in %s/soak.csv and soak.json", e.out)
	return rep, err
}

func (e *env) setUp(ctx context.Context) error {
	logf("starting Kafka")
	if _, err := cmdtest.Script(e.root, nil, "kafka", "start"); err != nil {
		return err
	}
	e.brokers = "127.0.0.1:" + envOr("KAFKA_PORT", "9092")
	if e.cfg.Endpoint == "" {
		logf("restarting the embedded Flink job server (FLINK_SDF_PATCH=%s)", envOr("FLINK_SDF_PATCH", "on"))
		if _, err := cmdtest.Script(e.root, nil, "flink", "restart"); err != nil {
			return err
		}
		e.startedFlinkEmbedded = true
		fenv, _ := cmdtest.Script(e.root, nil, "flink", "env")
		e.cfg.Endpoint = envValue(fenv, "HAADE_FLINK_ENDPOINT")
		pid, err := os.ReadFile(filepath.Join(envOr("HAADE_RUN", "/tmp/haade-services"), "pids/flink.pid"))
		if err != nil {
			return fmt.Errorf("the job server's pid: %w", err)
		}
		e.jvmPID, _ = strconv.Atoi(strings.TrimSpace(string(pid)))
	} else {
		e.jvmPID = e.cfg.JVMPID
	}
	logf("building bronze, produce and query")
	dir := filepath.Join(e.out, "bin")
	bins, err := cmdtest.Build(dir, filepath.Join(e.root, "pipelines/bronze"), filepath.Join(e.root, "pipelines/produce"), filepath.Join(e.root, "pipelines/query"))
	if err != nil {
		return err
	}
	e.bins = map[string]string{"bronze": bins[0], "produce": bins[1], "query": bins[2]}
	if e.kafka, err = kgo.NewClient(kgo.SeedBrokers(strings.Split(e.brokers, ",")...)); err != nil {
		return err
	}
	e.topic = "soak-" + strconv.FormatInt(time.Now().Unix(), 36)
	if _, err := kadm.NewClient(e.kafka).CreateTopic(ctx, int32(e.cfg.Partitions), 1, nil, e.topic); err != nil {
		return fmt.Errorf("create topic %s: %w", e.topic, err)
	}
	e.catalogURI = filepath.Join(e.out, "catalog.db")
	e.wareh = filepath.Join(e.out, "warehouse")
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// proc is a process soak started; exited is closed when it has exited, err
// then holds its Wait error.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

func (e *env) start(name string, args ...string) (*proc, error) {
	lf, err := os.Create(filepath.Join(e.out, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.bins[name], args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); lf.Close(); close(p.exited) }()
	e.procs = append(e.procs, p)
	return p, nil
}

func (e *env) soak(ctx context.Context, rep *Report) error {
	logf("producing %.0f events/s to %s (%d partitions), bronze on Flink at %s", e.cfg.Rate, e.topic, e.cfg.Partitions, e.cfg.Endpoint)
	if _, err := e.start("produce", "--brokers="+e.brokers, "--topic="+e.topic, "--rate="+strconv.FormatFloat(e.cfg.Rate, 'f', -1, 64), "--metrics-addr="); err != nil {
		return err
	}
	bronze, err := e.start("bronze", "--runner=flink", "--endpoint="+e.cfg.Endpoint, "--environment_type=LOOPBACK",
		"--brokers="+e.brokers, "--topic="+e.topic, "--catalog-uri="+e.catalogURI, "--warehouse="+e.wareh,
		"--commit-interval="+e.cfg.CommitInterval.String(), "--metrics-addr=", "--job_name=soak")
	if err != nil {
		return err
	}
	if err := e.findJob(ctx, bronze); err != nil {
		return err
	}
	logf("Flink job %s at %s; heap of pid %d; sampling every %s for %s, warm-up %s", e.jobID, e.restURL, e.jvmPID, e.cfg.Interval, e.cfg.Duration, e.cfg.Warmup)
	cf, err := os.Create(filepath.Join(e.out, "soak.csv"))
	if err != nil {
		return err
	}
	defer cf.Close()
	w := csv.NewWriter(cf)
	_ = w.Write(csvHeader)
	w.Flush()
	t0 := time.Now()
	tick := time.NewTicker(e.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// Interrupted: judge what there is, with the later half as the window.
			if n := len(rep.Samples); n >= 4 {
				short := e.cfg
				short.Warmup = time.Duration(rep.Samples[n-1].Elapsed/2) * time.Second
				rep.Interrupted, rep.Warmup = true, short.Warmup.String()
				evaluate(short, rep)
				return nil
			}
			return ctx.Err()
		case <-bronze.exited:
			return fmt.Errorf("bronze exited during the soak: %v (see %s/bronze.log)", bronze.err, e.out)
		case now := <-tick.C:
			s := e.sample(ctx, now, t0)
			rep.Samples = append(rep.Samples, s)
			_ = w.Write(s.csv())
			w.Flush()
			logf("%5.1f min: checkpoint %s, heap %s, rows %d, lag %d, freshness %.0fs, %s", s.Elapsed/60, mib(s.CheckpointBytes), mib(s.HeapBytes), s.Rows, s.Lag, s.FreshnessS, s.JobState)
			if now.Sub(t0) >= e.cfg.Duration-time.Second {
				evaluate(e.cfg, rep)
				return nil
			}
		}
	}
}

var csvHeader = []string{"time", "elapsed_s", "checkpoint_bytes", "checkpoints", "failed_checkpoints", "heap_after_gc_bytes", "produced", "rows", "lag", "freshness_s", "job_state"}

func (s Sample) csv() []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{s.Time.UTC().Format(time.RFC3339), strconv.FormatFloat(s.Elapsed, 'f', 0, 64), i(s.CheckpointBytes), i(s.Checkpoints), i(s.FailedCheckpoints),
		i(s.HeapBytes), i(s.Produced), i(s.Rows), i(s.Lag), strconv.FormatFloat(s.FreshnessS, 'f', 1, 64), s.JobState}
}

func mib(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
}

// evaluate fits the figures after warm-up and lists what failed.
func evaluate(cfg Config, rep *Report) {
	var xs, cp, heap []float64
	for _, s := range rep.Samples {
		xs = append(xs, s.Elapsed/60)
		cp = append(cp, float64(s.CheckpointBytes))
		heap = append(heap, float64(s.HeapBytes))
	}
	from := cfg.Warmup.Minutes()
	var err error
	if rep.Checkpoint, err = fitGrowth(xs, cp, from); err != nil {
		rep.Failures = append(rep.Failures, "checkpoint size: "+err.Error())
	} else if rep.Checkpoint.GrowthPct > cfg.MaxCheckpointGrowth {
		rep.Failures = append(rep.Failures, fmt.Sprintf("checkpoint size grew %.1f%% after warm-up (%+.0f bytes/min, %s to %s), more than --max-checkpoint-growth=%g%%",
			rep.Checkpoint.GrowthPct, rep.Checkpoint.SlopePerMin, mib(int64(rep.Checkpoint.First)), mib(int64(rep.Checkpoint.Last)), cfg.MaxCheckpointGrowth))
	}
	if cfg.JVMPID != 0 {
		if rep.Heap, err = fitGrowth(xs, heap, from); err != nil {
			rep.Failures = append(rep.Failures, "heap after GC: "+err.Error())
		} else if rep.Heap.GrowthPct > cfg.MaxHeapGrowth {
			rep.Failures = append(rep.Failures, fmt.Sprintf("heap after GC grew %.1f%% after warm-up (%+.2f MiB/min, %s to %s), more than --max-heap-growth=%g%%",
				rep.Heap.GrowthPct, rep.Heap.SlopePerMin/(1<<20), mib(int64(rep.Heap.First)), mib(int64(rep.Heap.Last)), cfg.MaxHeapGrowth))
		}
	}
	var firstRows int64 = -1
	for _, s := range rep.Samples {
		if s.Elapsed/60 < from {
			continue
		}
		if s.JobState != "RUNNING" {
			rep.Failures = append(rep.Failures, fmt.Sprintf("at %.1f min the Flink job was %s", s.Elapsed/60, s.JobState))
			break
		}
		if s.FreshnessS < 0 || s.FreshnessS > cfg.MaxFreshness.Seconds() {
			rep.Failures = append(rep.Failures, fmt.Sprintf("at %.1f min the newest bronze snapshot was %.0fs old, more than --max-freshness=%s", s.Elapsed/60, s.FreshnessS, cfg.MaxFreshness))
			break
		}
		if firstRows < 0 {
			firstRows = s.Rows
		}
	}
	if n := len(rep.Samples); n > 0 && firstRows >= 0 && rep.Samples[n-1].Rows <= firstRows {
		rep.Failures = append(rep.Failures, "no rows landed after warm-up")
	}
}

func writeReport(dir string, rep Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "soak.json"), append(b, '\n'), 0o644)
}

// findJob waits for the Flink job of this run: RUNNING, newest start time.
func (e *env) findJob(ctx context.Context, bronze *proc) error {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		for _, base := range e.restCandidates() {
			jobs, err := (&runners.FlinkREST{Base: base}).Jobs(ctx)
			if err != nil {
				continue
			}
			sort.Slice(jobs, func(i, j int) bool { return jobs[i].Start > jobs[j].Start })
			for _, j := range jobs {
				if j.State == "RUNNING" {
					e.restURL, e.jobID = base, j.ID
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-bronze.exited:
			return fmt.Errorf("bronze exited before its Flink job ran: %v (see %s/bronze.log)", bronze.err, e.out)
		case <-time.After(2 * time.Second):
		}
	}
	return fmt.Errorf("no RUNNING Flink job at %v within 3 minutes (see %s/bronze.log)", e.restCandidates(), e.out)
}

func (e *env) restCandidates() []string {
	if e.cfg.FlinkREST != "" {
		return []string{strings.TrimRight(e.cfg.FlinkREST, "/")}
	}
	return runners.LoopbackFlinkRESTs(os.Getenv("FLINK_REST_PORTS"))
}

// rest is the client of the REST API of the Flink cluster that runs the job.
func (e *env) rest() *runners.FlinkREST { return &runners.FlinkREST{Base: e.restURL} }

func (e *env) sample(ctx context.Context, now, t0 time.Time) Sample {
	s := Sample{Time: now, Elapsed: now.Sub(t0).Seconds(), CheckpointBytes: -1, HeapBytes: -1, Produced: -1, Rows: -1, Lag: -1, FreshnessS: -1, JobState: "UNKNOWN"}
	var cp struct {
		Counts struct {
			Completed int64 `json:"completed"`
			Failed    int64 `json:"failed"`
		} `json:"counts"`
		Latest struct {
			Completed *struct {
				StateSize        int64 `json:"state_size"`
				CheckpointedSize int64 `json:"checkpointed_size"`
			} `json:"completed"`
		} `json:"latest"`
	}
	if err := e.rest().Get(ctx, "/jobs/"+e.jobID+"/checkpoints", &cp); err != nil {
		logf("checkpoints: %v", err)
	} else {
		s.Checkpoints, s.FailedCheckpoints = cp.Counts.Completed, cp.Counts.Failed
		if c := cp.Latest.Completed; c != nil {
			s.CheckpointBytes = c.StateSize
			if s.CheckpointBytes == 0 {
				s.CheckpointBytes = c.CheckpointedSize
			}
		}
	}
	var job struct {
		State string `json:"state"`
	}
	if err := e.rest().Get(ctx, "/jobs/"+e.jobID, &job); err == nil {
		s.JobState = job.State
	}
	if e.jvmPID > 0 {
		if h, err := heapAfterGC(e.jvmPID); err != nil {
			logf("heap: %v", err)
		} else {
			s.HeapBytes = h
		}
	}
	if ends, err := kadm.NewClient(e.kafka).ListEndOffsets(ctx, e.topic); err != nil {
		logf("end offsets: %v", err)
	} else {
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		s.Produced = sum
	}
	rows, err1 := e.count("lakehouse.bronze_events")
	dlq, err2 := e.count("lakehouse.bronze_events_dlq")
	if err1 == nil {
		if err2 != nil {
			dlq = 0
		}
		s.Rows = rows + dlq
		if s.Produced >= 0 {
			s.Lag = s.Produced - s.Rows
		}
	} else {
		logf("rows: %v", err1)
	}
	if ts, err := e.newestSnapshot(); err == nil {
		// The snapshot may be newer than the tick that started this sample.
		s.FreshnessS = max(0, time.Since(ts).Seconds())
	}
	return s
}

func (e *env) query(args ...string) (string, error) {
	cmd := exec.Command(e.bins["query"], append([]string{"--catalog-uri=" + e.catalogURI, "--warehouse=" + e.wareh, "--color=never"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("query %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (e *env) count(table string) (int64, error) {
	out, err := e.query("count", table)
	if err != nil {
		return -1, err
	}
	return strconv.ParseInt(strings.TrimSpace(out), 10, 64)
}

var snapshotLine = regexp.MustCompile(`^snapshot \d+\s+(\S+)`)

func (e *env) newestSnapshot() (time.Time, error) {
	out, err := e.query("snapshots", "lakehouse.bronze_events")
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := snapshotLine.FindStringSubmatch(sc.Text()); m != nil {
			if t, err := time.Parse("2006-01-02T15:04:05.000Z07:00", m[1]); err == nil && t.After(newest) {
				newest = t
			}
		}
	}
	if newest.IsZero() {
		return newest, fmt.Errorf("no snapshot yet")
	}
	return newest, nil
}

var heapUsed = regexp.MustCompile(`(?m)heap\s+total \d+K, used (\d+)K`)

// heapAfterGC forces a full GC in the JVM and reads its used heap.
func heapAfterGC(pid int) (int64, error) {
	p := strconv.Itoa(pid)
	if out, err := exec.Command("jcmd", p, "GC.run").CombinedOutput(); err != nil {
		return -1, fmt.Errorf("jcmd %s GC.run: %v: %s", p, err, strings.TrimSpace(string(out)))
	}
	out, err := exec.Command("jcmd", p, "GC.heap_info").CombinedOutput()
	if err != nil {
		return -1, fmt.Errorf("jcmd %s GC.heap_info: %v: %s", p, err, strings.TrimSpace(string(out)))
	}
	m := heapUsed.FindSubmatch(out)
	if m == nil {
		return -1, fmt.Errorf("jcmd %s GC.heap_info: no \"heap total ..., used ...K\" in %q", p, firstLine(string(out)))
	}
	k, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return k << 10, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func (e *env) tearDown() {
	if e.jobID != "" && !e.cfg.Keep {
		// Wait for a job on a cluster of the caller's (--endpoint) to stop: it outlives
		// soak. The embedded one ends with the job server, stopped below, and takes its
		// REST API with it, so there only the request is sent.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var err error
		if !e.startedFlinkEmbedded {
			err = e.rest().Cancel(ctx, e.jobID, 45*time.Second)
		} else {
			err = e.rest().RequestCancel(ctx, e.jobID)
		}
		cancel()
		if err != nil {
			logf("cancel of Flink job %s: %v", e.jobID, err)
		} else {
			logf("cancelled Flink job %s", e.jobID)
		}
	}
	for i := len(e.procs) - 1; i >= 0; i-- {
		p := e.procs[i]
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	if e.kafka != nil {
		if e.topic != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = kadm.NewClient(e.kafka).DeleteTopics(ctx, e.topic)
			cancel()
		}
		e.kafka.Close()
	}
	if e.startedFlinkEmbedded && !e.cfg.Keep {
		_, _ = cmdtest.Script(e.root, nil, "flink", "stop")
	}
	// The binaries are about 550 MB; the figures, logs and tables stay.
	_ = os.RemoveAll(filepath.Join(e.out, "bin"))
}

// envValue reads NAME from a script's `env` output (export NAME=value lines).
func envValue(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "export "+name+"="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
