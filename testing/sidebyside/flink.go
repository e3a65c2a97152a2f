package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
)

// The flink contender: pipelines/bronze with --runner=flink --bounded on
// the standalone Flink 1.19 cluster of testing/services/flinkcluster.sh (a
// JobManager and two TaskManagers, separate JVMs) through Beam's job server
// (--flink-master pointing at the cluster), PROCESS workers (Beam's Go boot
// program through flink/worker-process.sh) running a static bronze as
// --worker_binary, as testing/flinke2e's cluster test runs it. The bundle
// time and the parallelism (the topic's partition count) are
// runners/flink.go's defaults; --flink-bundle-time overrides the first.
//
// The cluster and the job server are started once per harness run, before
// any clock, reused by every round and stopped at the end (unless they were
// running already). Each run is timed like bronze's, from the submitting
// command's start until every row is visible; the bounded job then ends and
// the command exits, and that exit is recorded too (exit_s), as is the Flink
// job's own duration from its REST API (flink_job_s: from the job's
// creation on the JobManager to its end, so without the submission and the
// staging of the worker binary before it). CPU and peak RSS are the sum over
// the submitting process, the four JVMs (JobManager, TaskManagers, job
// server) and the Go workers below the TaskManagers, from launch until
// every row is visible; the JVMs' CPU counts from the launch, not from
// their start.

// flinkStack is the running cluster, as flinkcluster.sh env describes it.
type flinkStack struct {
	endpoint, rest, boot, workerCmd string
	// bin is bronze, built static: it submits and is the worker binary.
	bin string
	// started says the harness started the cluster and so stops it.
	started bool
	// beamClasspath: the cluster's JVMs have the job server's Beam jars
	// (flinkcluster.sh, FLINKC_BEAM_CLASSPATH=1), so a job ships none
	// (bronze --flink-cluster-classpath).
	beamClasspath bool
	// nativeClasspath: the cluster's JVMs have Iceberg's Flink runtime and
	// the Kafka SQL connector (FLINKC_NATIVE_CLASSPATH=1), which the native
	// contender's job needs.
	nativeClasspath bool
}

// clusterJVMs are the service names of the cluster's JobManager and
// TaskManagers in flinkcluster.sh, and flinkJVMs those and Beam's job server
// (flink.sh): their pid files are $HAADE_RUN/pids/NAME.pid.
var (
	clusterJVMs = []string{"flink-jobmanager", "flink-taskmanager-1", "flink-taskmanager-2"}
	flinkJVMs   = append(slices.Clip(clusterJVMs), "flink")
)

// setUpFlink prepares what the flink and native contenders run on, once:
// for flink it builds bronze static, for native it installs Iceberg's Flink
// jars (flinknative.sh install); then it starts the cluster and Beam's job
// server unless they run, and reads their addresses. A cluster it starts
// has Beam's jars on its class path (unless FLINKC_BEAM_CLASSPATH says
// otherwise) and, for native, Iceberg's: one cluster serves both. A
// running cluster without Iceberg's jars is an error for native.
func (e *env) setUpFlink() error {
	if e.flink != nil {
		return nil
	}
	st := &flinkStack{}
	if slices.Contains(e.cfg.Contenders, "flink") {
		// Built as the Dockerfile builds it (-trimpath, -ldflags=-w: no
		// DWARF), since each TaskManager stages this binary for its worker.
		logf("building pipelines/bronze static, as the Dockerfile does (the Flink worker binary)")
		bins, err := cmdtest.Static.Build(filepath.Join(e.dir, "flink"), filepath.Join(e.root, "pipelines/bronze"))
		if err != nil {
			return fmt.Errorf("static: %w", err)
		}
		st.bin = bins[0]
	}
	native := slices.Contains(e.cfg.Contenders, "native")
	if native {
		logf("installing Iceberg's Flink runtime and the Kafka SQL connector (cached)")
		if _, err := cmdtest.Script(e.root, nil, "flinknative", "install"); err != nil {
			return err
		}
	}
	if _, err := cmdtest.Script(e.root, nil, "flinkcluster", "status"); err != nil {
		// Beam's jars on the cluster's class path, unless told otherwise:
		// each job then ships none of them (flinkcluster.sh).
		if os.Getenv("FLINKC_BEAM_CLASSPATH") == "" {
			os.Setenv("FLINKC_BEAM_CLASSPATH", "1")
		}
		if native {
			os.Setenv("FLINKC_NATIVE_CLASSPATH", "1")
		}
		logf("starting the Flink cluster (JobManager, 2 TaskManagers) and Beam's job server: not timed")
		t0 := time.Now()
		if _, err := cmdtest.Script(e.root, nil, "flinkcluster", "start"); err != nil {
			return err
		}
		st.started = true
		logf("Flink cluster ready after %v", time.Since(t0).Round(time.Second))
	} else {
		logf("the Flink cluster runs already: using it, and leaving it running (with Beam's jars on its class path, restart it after a change to a type that crosses the runner: testing/services/FLINK.md)")
	}
	out, err := cmdtest.Script(e.root, nil, "flinkcluster", "env")
	if err != nil {
		return err
	}
	for _, kv := range []struct {
		name string
		dst  *string
	}{{"HAADE_FLINK_ENDPOINT", &st.endpoint}, {"HAADE_FLINK_REST", &st.rest}, {"HAADE_FLINK_BOOT", &st.boot}, {"HAADE_FLINK_WORKER_COMMAND", &st.workerCmd}} {
		if *kv.dst = exportOf(out, kv.name); *kv.dst == "" {
			return fmt.Errorf("flinkcluster.sh env: no %s in\n%s", kv.name, out)
		}
	}
	st.beamClasspath = exportOf(out, "HAADE_FLINK_BEAM_CLASSPATH") == "1"
	st.nativeClasspath = exportOf(out, "HAADE_FLINK_NATIVE_CLASSPATH") == "1"
	e.flink = st
	if native && !st.nativeClasspath {
		return fmt.Errorf("the Flink cluster runs without Iceberg's jars on its class path, which the native contender needs: restart it with FLINKC_NATIVE_CLASSPATH=1 testing/services/flinkcluster.sh restart")
	}
	return nil
}

// tearDownFlink stops the cluster if the harness started it.
func (e *env) tearDownFlink() {
	if e.flink == nil || !e.flink.started || e.cfg.Keep {
		return
	}
	logf("stopping the Flink cluster and its job server")
	if _, err := cmdtest.Script(e.root, nil, "flinkcluster", "stop"); err != nil {
		logf("%v", err)
	}
}

func exportOf(env, name string) string {
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "export "+name+"="); ok {
			return v
		}
	}
	return ""
}

// flinkJobName is the run's Beam job name: letters and digits only, as
// Beam's Flink runner builds the Flink job's name from it.
func flinkJobName(r trial) string {
	var b strings.Builder
	for _, c := range r.name {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func flinkCommand(r trial) (*exec.Cmd, error) {
	st := r.flink
	// PROCESS workers do not inherit the submitter's environment: the S3
	// credentials (MinIO's test ones) go in the environment's own, and the
	// catalog's password, which bronze cuts from the URI it ships, in a
	// file that the workers read (HAADE_CATALOG_PASSWORD_FILE): only its
	// path is in the pipeline.
	pwFile := filepath.Join(r.dir, "catalog-password")
	if u, err := url.Parse(catalogURI); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		if err := os.WriteFile(pwFile, []byte(pw), 0o600); err != nil {
			return nil, err
		}
	}
	envCfg, err := json.Marshal(map[string]any{"command": st.workerCmd, "env": map[string]string{
		"AWS_ACCESS_KEY_ID": os.Getenv("AWS_ACCESS_KEY_ID"), "AWS_SECRET_ACCESS_KEY": os.Getenv("AWS_SECRET_ACCESS_KEY"),
		"AWS_REGION": os.Getenv("AWS_REGION"), "HAADE_FLINK_BOOT": st.boot,
		icebergio.EnvCatalogPasswordFile: pwFile,
	}})
	if err != nil {
		return nil, err
	}
	args := bronzeArgs(r, "--runner=flink", "--bounded",
		"--endpoint="+st.endpoint, "--flink-rest="+st.rest, "--job_name="+flinkJobName(r),
		"--environment_type=PROCESS", "--environment_config="+string(envCfg), "--worker_binary="+st.bin)
	if st.beamClasspath {
		args = append(args, "--flink-cluster-classpath")
	}
	if r.cfg.FlinkParallelism > 0 {
		args = append(args, fmt.Sprintf("--parallelism=%d", r.cfg.FlinkParallelism))
	}
	if r.cfg.FlinkBundleTime > 0 {
		args = append(args, "--flink-max-bundle-time="+r.cfg.FlinkBundleTime.String())
	}
	return exec.Command(st.bin, args...), nil
}

// flinkPrepare makes sure no job of the run outlives it: a run that times
// out is killed, and its Flink job would keep the slots.
func flinkPrepare(r trial) error {
	name, rest := flinkJobName(r), r.flink.rest
	r.after = append(r.after, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if jobs, err := runners.CancelFlinkJobs(ctx, rest, name); err != nil {
			logf("cancelling Flink job %s: %v", name, err)
		} else if len(jobs) > 0 {
			logf("cancelled %d Flink job(s) of %s left running", len(jobs), name)
		}
	})
	return nil
}

// flinkHealth fails the run when its Flink job failed, or restarted: a
// restarted bounded job reads again, and the harness would wait for the
// timeout (or see duplicates).
func flinkHealth(r trial) error {
	j, ok := flinkJobOf(r)
	if !ok {
		return nil
	}
	if j.State == "FAILED" {
		return fmt.Errorf("Flink job %s (%s) FAILED", j.ID, j.Name)
	}
	if j.State == "RESTARTING" {
		return fmt.Errorf("Flink job %s (%s) is RESTARTING: a task failed (see the TaskManagers' logs)", j.ID, j.Name)
	}
	return nil
}

// flinkJob is the part of GET /jobs/overview the harness reads.
type flinkJob struct {
	ID       string `json:"jid"`
	Name     string `json:"name"`
	State    string `json:"state"`
	Start    int64  `json:"start-time"`
	End      int64  `json:"end-time"`
	Duration int64  `json:"duration"`
}

// flinkJobOf is the run's latest Flink job, from the REST API.
func flinkJobOf(r trial) (flinkJob, bool) {
	var body struct{ Jobs []flinkJob }
	if !getJSON(r.flink.rest+"/jobs/overview", &body) {
		return flinkJob{}, false
	}
	name := flinkJobName(r)
	var best flinkJob
	found := false
	for _, j := range body.Jobs {
		// Beam names the Flink job <name>-<user>-<MMddHHmmss>-<hex>.
		if (j.Name == name || strings.HasPrefix(j.Name, name+"-")) && (!found || j.Start > best.Start) {
			best, found = j, true
		}
	}
	return best, found
}

// flinkJobSeconds is how long the run's Flink job ran until it finished or
// was cancelled, by the JobManager's clock, and the job's last state; 0
// seconds when the REST API does not say or the job did neither.
func flinkJobSeconds(r trial) (float64, string) {
	var state string
	for range 20 {
		j, ok := flinkJobOf(r)
		if ok {
			state = j.State
		}
		if ok && (j.State == "FINISHED" || j.State == "CANCELED") && j.Duration > 0 {
			return float64(j.Duration) / 1000, state
		}
		time.Sleep(250 * time.Millisecond)
	}
	return 0, state
}

// flinkPIDs are the cluster's JVMs, metered with the submitting process's
// tree (the Go workers are below the TaskManagers).
func flinkPIDs(trial) []int { return pidsOf(flinkJVMs) }

var flinkContender = contender{
	name:     "flink",
	command:  flinkCommand,
	prepare:  flinkPrepare,
	health:   flinkHealth,
	bounded:  true,
	pids:     flinkPIDs,
	caughtUp: bronzeCaughtUp, // upsert.go
	after: func(r trial, res *Result) {
		res.FlinkJobSeconds, res.FlinkJobState = flinkJobSeconds(r)
		res.FlinkReadSubtasks = flinkReadSubtasks(r)
	},
}

// flinkReadSubtasks is the read-records of each subtask of the run's read
// stage (the fused stage that reads Kafka and parses: its name has
// "{kafkaio.Read,"), from the REST API; nil when it does not say.
func flinkReadSubtasks(r trial) []int {
	j, ok := flinkJobOf(r)
	if !ok {
		return nil
	}
	var job struct {
		Vertices []struct{ ID, Name string }
	}
	if !getJSON(r.flink.rest+"/jobs/"+j.ID, &job) {
		return nil
	}
	for _, v := range job.Vertices {
		if !strings.Contains(v.Name, "{kafkaio.Read,") {
			continue
		}
		var vertex struct {
			Subtasks []struct {
				Metrics struct {
					ReadRecords int `json:"read-records"`
				}
			}
		}
		if !getJSON(r.flink.rest+"/jobs/"+j.ID+"/vertices/"+v.ID, &vertex) {
			return nil
		}
		var out []int
		for _, st := range vertex.Subtasks {
			out = append(out, st.Metrics.ReadRecords)
		}
		return out
	}
	return nil
}

// getJSON decodes the JSON body of a GET of url into v; false on any
// failure (the REST API is read for figures, never for correctness).
func getJSON(url string, v any) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
}
