package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/testing/stats"
	"github.com/prometheus/procfs"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	brokers    = "127.0.0.1:9092"
	s3Endpoint = "http://127.0.0.1:9000"
	catalogURI = "postgres://haade:haade@127.0.0.1:5432/lakehouse?sslmode=disable"
	warehouse  = "s3://warehouse/"
	// pollEvery is how often the harness reads the table's row count.
	pollEvery = 250 * time.Millisecond
	// sampleEvery is how often the process tree's CPU and RSS are read.
	sampleEvery = 100 * time.Millisecond
)

// Report is one invocation's results.
type Report struct {
	Date           string `json:"date"`
	Command        string `json:"command"`
	Machine        string `json:"machine"`
	Events         int    `json:"events"`
	Partitions     int    `json:"partitions"`
	Timestamps     string `json:"timestamps"`
	CommitInterval string `json:"commit_interval"`
	// Keys, Tombstones and LiveKeys describe a keyed (--keys) workload:
	// the keys, the share of tombstones, and the keys whose latest record
	// is not a tombstone, the rows a right table holds.
	Keys       int               `json:"keys,omitempty"`
	Tombstones float64           `json:"tombstones,omitempty"`
	LiveKeys   int               `json:"live_keys,omitempty"`
	Versions   map[string]string `json:"versions"`
	Results    []Result          `json:"results"`
}

// Result is one run of one contender.
type Result struct {
	Contender string `json:"contender"`
	Run       int    `json:"run"`
	// Visible is from launch until the table's current snapshot holds every
	// event (with --keys: until the commit, by the snapshot's timestamp, of
	// the first snapshot found to hold exactly each live key's latest
	// record); FirstVisible until it holds any.
	VisibleSeconds      float64 `json:"visible_s"`
	FirstVisibleSeconds float64 `json:"first_visible_s"`
	EventsPerSecond     float64 `json:"events_per_s"`
	// CPU and PeakRSS are the contender's process tree's, from launch until
	// every row is visible; ServicesCPU is Kafka's, MinIO's and
	// PostgreSQL's over the same span.
	CPUSeconds float64 `json:"cpu_s"`
	// CoresMedian is the median over the run's whole seconds of the cores
	// the contender's tree kept busy in each (CoresBySecond): what a run uses
	// while it works, without its start and its last commit weighing as much
	// as in CPU seconds over wall seconds.
	CoresMedian float64 `json:"cores_median,omitempty"`
	// CoresBySecond is the cores busy in each whole second from launch,
	// rounded to hundredths (treeMeter.coresBySecond).
	CoresBySecond []float64 `json:"cores_by_second,omitempty"`
	// MachineCoresBySecond is the same for the whole machine (every
	// process: the contender, the services, the harness), and
	// MachineCoresMedian its median.
	MachineCoresBySecond []float64 `json:"machine_cores_by_second,omitempty"`
	MachineCoresMedian   float64   `json:"machine_cores_median,omitempty"`
	PeakRSSBytes         int64     `json:"peak_rss_bytes"`
	ServicesCPUSeconds   float64   `json:"services_cpu_s"`
	// Rows is the count after the contender stopped: it must equal the
	// events, or the run fails.
	Rows      int64 `json:"rows"`
	Snapshots int   `json:"snapshots"`
	DataFiles int64 `json:"data_files"`
	// ExitSeconds is from launch until a bounded contender (flink) exited
	// on its own; FlinkJobSeconds is the Flink job's duration by Flink's
	// REST API (flink.go), until it FINISHED (flink) or the harness
	// cancelled it (native).
	ExitSeconds     float64 `json:"exit_s,omitempty"`
	FlinkJobSeconds float64 `json:"flink_job_s,omitempty"`
	// FlinkJobState is the run's Flink job's last state on the REST API:
	// FINISHED for a bounded job that ended well, CANCELED for the native
	// contender's streaming job once the harness stopped it.
	FlinkJobState string `json:"flink_job_state,omitempty"`
	// With --keys (upsert.go): Rows are the live keys, DataRows the rows
	// of the table's data files before deletes apply (total-records),
	// DataFiles and the delete files are the live files of the table after
	// the run, and
	// ScanSeconds are three full scans of it with iceberg-go, one after the
	// other (ScanMedianSeconds their median).
	DataRows      int64 `json:"data_rows,omitempty"`
	EqDeleteFiles int64 `json:"eq_delete_files,omitempty"`
	// EqDeleteFilesOnOlder are the equality delete files that delete rows
	// of earlier commits' data files (upsert.go's tableFiles).
	EqDeleteFilesOnOlder int64     `json:"eq_delete_files_on_older,omitempty"`
	PosDeleteFiles       int64     `json:"pos_delete_files,omitempty"`
	ScanSeconds          []float64 `json:"scan_s,omitempty"`
	ScanMedianSeconds    float64   `json:"scan_median_s,omitempty"`
	// FlinkReadSubtasks is, per subtask of the Flink job's read stage,
	// how many partitions it read (its input records on the REST API):
	// one each when the groups are spread (kafkaio's Topic.Plan).
	FlinkReadSubtasks []int `json:"flink_read_subtasks,omitempty"`
}

// env is what every run shares.
type env struct {
	cfg   Config
	root  string
	dir   string
	topic string
	id    string
	cat   catalog.Catalog
	// bronze is the built binary; sparkJars the jars for spark.jars.
	bronze, sparkJars string
	tables            []string
	// topics are more topics to delete at the end, beside topic.
	topics []string
	// after runs at the end, before the tables are dropped.
	after []func()
	// flink is the Flink cluster the flink contender runs on (flink.go).
	flink *flinkStack
	// live is, with --keys, the table a right run leaves: each live key's
	// latest record (upsert.go).
	live map[string]keyAt
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s sidebyside] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func measure(ctx context.Context, cfg Config, root string) (Report, error) {
	e, cleanup, err := newEnv(cfg, root)
	if err != nil {
		return Report{}, err
	}
	defer cleanup()

	if err := e.setUp(ctx); err != nil {
		return Report{}, err
	}
	// Deferred calls run last first: the cluster stops after tearDown,
	// whose after funcs cancel the jobs left running through its REST API.
	defer e.tearDownFlink()
	defer e.tearDown()
	if err := e.preload(ctx); err != nil {
		return Report{}, err
	}

	rep := Report{
		Date:           time.Now().UTC().Format(time.RFC3339),
		Command:        "go run ./testing/sidebyside " + strings.Join(os.Args[1:], " "),
		Machine:        machine(),
		Events:         cfg.Events,
		Partitions:     cfg.Partitions,
		Timestamps:     cfg.Timestamps,
		CommitInterval: cfg.CommitInterval.String(),
		Versions:       e.versions(),
		Keys:           cfg.Keys,
		LiveKeys:       len(e.live),
	}
	if cfg.Keys > 0 {
		rep.Tombstones = cfg.Tombstones
	}
	for r := 1; r <= cfg.Repeat; r++ {
		for _, name := range cfg.Contenders {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			res, err := e.runOne(ctx, contenderByName[name], r)
			if err != nil {
				return rep, fmt.Errorf("%s, run %d: %w", name, r, err)
			}
			logf("%s run %d: all %d rows visible after %.1fs (first after %.1fs): %.0f events/s, %.1f CPU s (%.2f per wall s, %.2f cores in the median second; the machine %.2f), peak RSS %d MiB, services %.1f CPU s",
				name, r, res.Rows, res.VisibleSeconds, res.FirstVisibleSeconds, res.EventsPerSecond, res.CPUSeconds,
				res.CPUSeconds/res.VisibleSeconds, res.CoresMedian, res.MachineCoresMedian, res.PeakRSSBytes>>20, res.ServicesCPUSeconds)
			rep.Results = append(rep.Results, res)
		}
	}
	return rep, nil
}

// setUp starts the services, installs what the contenders need, builds
// bronze and opens the catalog.
func (e *env) setUp(ctx context.Context) error {
	for _, s := range []string{"postgres", "minio", "kafka"} {
		logf("starting %s", s)
		if _, err := cmdtest.Script(e.root, nil, s, "start"); err != nil {
			return err
		}
	}
	for _, name := range e.cfg.Contenders {
		switch name {
		case "bronze":
			logf("building pipelines/bronze")
			bins, err := cmdtest.Build(e.dir, filepath.Join(e.root, "pipelines/bronze"))
			if err != nil {
				return err
			}
			e.bronze = bins[0]
		case "spark":
			logf("installing pyspark and Spark's jars (cached)")
			out, err := cmdtest.Script(e.root, nil, "python", "spark-jars")
			if err != nil {
				return err
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			e.sparkJars = lines[len(lines)-1]
		case "connect":
			logf("installing Kafka Connect and the Iceberg sink (cached)")
			if _, err := cmdtest.Script(e.root, nil, "connect", "install"); err != nil {
				return err
			}
		case "flink", "native":
			if err := e.setUpFlink(); err != nil {
				return err
			}
		}
	}
	var err error
	e.cat, err = icebergio.CatalogConfig{Type: "sql", Name: "local", URI: catalogURI, Warehouse: warehouse, S3Endpoint: s3Endpoint}.Open(ctx)
	return err
}

// preload makes the topic and fills it with --events sample events.
func (e *env) preload(ctx context.Context) error {
	if _, err := cmdtest.Script(e.root, nil, "kafka", "create-topic", e.topic, strconv.Itoa(e.cfg.Partitions)); err != nil {
		return err
	}
	start := time.Now()
	if e.cfg.Keys > 0 {
		logf("preloading %d events over %d keys, about %.0f%% tombstones, into %s (%d partitions)", e.cfg.Events, e.cfg.Keys, 100*e.cfg.Tombstones, e.topic, e.cfg.Partitions)
		if err := produceKeyed(ctx, []string{brokers}, e.topic, e.cfg); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	} else {
		logf("preloading %d events into %s (%d partitions)", e.cfg.Events, e.topic, e.cfg.Partitions)
		const chunk = 250_000
		g := kafkatest.NewGenerator(e.cfg.Seed, 0, nil)
		g.UTC = e.cfg.Timestamps == "utc"
		for done := 0; done < e.cfg.Events; {
			vs := make([][]byte, min(chunk, e.cfg.Events-done))
			for i := range vs {
				vs[i], _ = g.Next()
			}
			if err := kafkatest.Produce(ctx, []string{brokers}, e.topic, vs); err != nil {
				return fmt.Errorf("preload: %w", err)
			}
			done += len(vs)
		}
	}
	logf("preloaded in %v", time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	// The warm-up read gathers, for a keyed topic, each key's latest record.
	l := newLatest()
	var each func(*kgo.Record)
	if e.cfg.Keys > 0 {
		each = l.add
	}
	if err := warmUp(ctx, e.topic, e.cfg.Events, each); err != nil {
		return err
	}
	logf("read the topic once, to warm the broker, in %v", time.Since(start).Round(100*time.Millisecond))
	if e.cfg.Keys > 0 {
		var err error
		if e.live, err = l.live(); err != nil {
			return err
		}
		logf("%d keys, %d live (their latest record is not a tombstone): a right table holds %d rows", len(l.at), len(e.live), len(e.live))
	}
	return nil
}

// tearDown drops the tables and deletes the topic, unless --keep.
func (e *env) tearDown() {
	for _, f := range e.after {
		f()
	}
	if e.cfg.Keep {
		logf("kept topic %s and tables %s", e.topic, strings.Join(e.tables, ", "))
		return
	}
	if e.cat != nil && len(e.tables) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := icebergtest.Purge(ctx, e.cat, s3Endpoint, e.tables...); err != nil {
			logf("dropping the tables: %v", err)
		}
	}
	for _, t := range append([]string{e.topic}, e.topics...) {
		if _, err := cmdtest.Script(e.root, nil, "kafka", "topics", "--delete", "--topic", t); err != nil {
			logf("deleting topic %s: %v", t, err)
		}
	}
}

// trial is one contender's run: its table, its scratch directory, its id.
type trial struct {
	*env
	table, dlq, name string
	dir              string
}

// contender makes the command of one run. prepare, when set, runs before
// the clock starts.
type contender struct {
	name    string
	command func(r trial) (*exec.Cmd, error)
	prepare func(r trial) error
	// health, when set, reports a contender that is alive but failed.
	health func(r trial) error
	// bounded: it exits on its own, with status 0, once every row is in.
	bounded bool
	// pids, when set, are more processes whose trees are metered with the
	// contender's own (from launch: what they used before is left out).
	pids func(r trial) []int
	// after, when set, adds to the result once the run is checked.
	after func(r trial, res *Result)
	// stop, when set, stops a contender that is not bounded as its
	// operator would, before the harness sends its process SIGTERM (the
	// native contender's Flink job outlives its SQL client).
	stop func(r trial)
	// caughtUp, for a contender that upserts (--keys), says whether it has
	// read the topic to ends by its own account, so that its table is worth
	// a scan (upsert.go); the error says how far it is.
	caughtUp func(ctx context.Context, r trial, tbl *table.Table, ends map[int32]int64) (bool, error)
}

var contenderByName = map[string]contender{
	"bronze": {"bronze", func(r trial) (*exec.Cmd, error) {
		return exec.Command(r.bronze, bronzeArgs(r, "--runner=direct")...), nil
	}, nil, nil, false, nil, nil, nil, bronzeCaughtUp},
	"spark": {"spark", func(r trial) (*exec.Cmd, error) {
		return exec.Command("bash", filepath.Join(r.root, "testing/services/python.sh"), "python",
			filepath.Join(r.root, "testing/sidebyside/spark_bronze.py"),
			"--brokers="+brokers, "--topic="+r.topic, "--table="+r.table,
			"--trigger-ms="+strconv.FormatInt(r.cfg.CommitInterval.Milliseconds(), 10),
			"--checkpoint="+filepath.Join(r.dir, "checkpoint"), "--jars="+r.sparkJars), nil
	}, nil, nil, false, nil, nil, nil, nil},
	// The sink cannot make bronze's table (it infers strings, and no
	// partitioning), so connect.sh prepare makes it, and the control topic,
	// before the clock starts. The script ends in exec java: the child is
	// the JVM. CONNECT_LOG=- sends its log to the harness's file.
	"connect": {"connect", func(r trial) (*exec.Cmd, error) {
		cmd := exec.Command("bash", filepath.Join(r.root, "testing/services/connect.sh"), "run",
			"--brokers", brokers, "--topic", r.topic, "--table", r.table,
			"--commit-interval-ms", strconv.FormatInt(r.cfg.CommitInterval.Milliseconds(), 10),
			"--group", r.name, "--skip-prepare")
		cmd.Env = append(os.Environ(), "CONNECT_LOG=-")
		return cmd, nil
	}, func(r trial) error {
		r.topics = append(r.topics, "control-iceberg-"+r.name)
		r.after = append(r.after, func() {
			if _, err := cmdtest.Script(r.root, nil, "connect", "reset", "--group", r.name); err != nil {
				logf("%v", err)
			}
		})
		_, err := cmdtest.Script(r.root, nil, "connect", "prepare", "--brokers", brokers, "--group", r.name, "--table", r.table)
		return err
	}, connectHealth, false, nil, nil, nil, nil},
	"flink":  flinkContender,  // flink.go
	"native": nativeContender, // native.go
}

// newTrial makes the directory and names the tables of one run of c (the
// dead letters' too, for bronze), records them for tearDown, and prepares
// the contender.
func (e *env) newTrial(c contender, prefix, name string) (trial, error) {
	r := trial{env: e, name: prefix + name, table: e.cfg.Namespace + "." + name, dir: filepath.Join(e.dir, name)}
	if c.name == "bronze" || c.name == "flink" {
		r.dlq = r.table + "_dlq"
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return trial{}, err
	}
	e.tables = append(e.tables, r.table)
	if r.dlq != "" {
		e.tables = append(e.tables, r.dlq)
	}
	if c.prepare != nil {
		if err := c.prepare(r); err != nil {
			return trial{}, err
		}
	}
	return r, nil
}

// runOne launches one contender, waits until its table holds every event,
// stops it, and checks the count.
func (e *env) runOne(ctx context.Context, c contender, n int) (Result, error) {
	name := fmt.Sprintf("%s_%s_%d", c.name, e.id, n)
	r, err := e.newTrial(c, "sidebyside-", name)
	if err != nil {
		return Result{}, err
	}
	cmd, err := c.command(r)
	if err != nil {
		return Result{}, err
	}
	// Logs outlive the run, for a look at what a contender did.
	logDir := filepath.Join(os.TempDir(), "haade-sidebyside-logs", e.id)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return Result{}, err
	}
	logPath := filepath.Join(logDir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return Result{}, err
	}
	defer lf.Close()
	cmd.Dir = e.root
	cmd.Stdout, cmd.Stderr = lf, lf
	// Its own process group, so that whatever it forks can be killed too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	services := e.servicePIDs()
	runtime.GC()

	logf("%s run %d: launching into %s", c.name, n, r.table)
	svc0 := cpuOf(services)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	roots := []int{cmd.Process.Pid}
	if c.pids != nil {
		roots = append(roots, c.pids(r)...)
	}
	meter := meterTrees(roots, sampleEvery)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	want := int64(e.cfg.Events)
	// keyed: the table is right when it holds each live key's latest
	// record (upsert.go), not when it counts every event.
	var w *upsertWatch
	if e.cfg.Keys > 0 {
		ends, err := endOffsets(ctx, e.topic)
		if err != nil {
			kill()
			meter.Stop()
			return Result{}, err
		}
		w = &upsertWatch{r: r, c: c, want: e.live, ends: ends}
	}
	right := func() (rows int64, ok bool, err error) {
		if w != nil {
			rows, ok = w.poll(ctx)
			return rows, ok, nil
		}
		st, err := icebergio.Stat(ctx, e.cat, r.table, "")
		return st.Rows, err == nil && st.Rows == want, err
	}
	var first, all, exitAt time.Duration
	deadline := time.After(e.cfg.Timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for all == 0 {
		select {
		case <-ctx.Done():
			kill()
			return Result{}, ctx.Err()
		case err := <-exited:
			if c.bounded && err == nil {
				// Done: the rows must all be there now.
				exitAt = time.Since(start)
				if _, ok, _ := right(); ok {
					all = exitAt
					if w != nil && w.rightAt.After(start) && w.rightAt.Sub(start) < exitAt {
						all = w.rightAt.Sub(start)
					}
					if first > all {
						first = all
					}
					if first == 0 {
						first = exitAt
					}
					continue
				}
			}
			meter.Stop()
			return Result{}, fmt.Errorf("exited before every row was visible (%v)%s; its log, %s:\n%s", err, w.why(), logPath, cmdtest.TailFile(logPath, 30))
		case <-deadline:
			kill()
			meter.Stop()
			return Result{}, fmt.Errorf("not every row visible after %v%s; its log, %s:\n%s", e.cfg.Timeout, w.why(), logPath, cmdtest.TailFile(logPath, 30))
		case <-tick.C:
		}
		if c.health != nil {
			if err := c.health(r); err != nil {
				kill()
				meter.Stop()
				return Result{}, fmt.Errorf("%w; its log, %s:\n%s", err, logPath, cmdtest.TailFile(logPath, 30))
			}
		}
		at := time.Since(start)
		rows, ok, err := right()
		if err != nil {
			continue // not created yet, or a transient error: poll again
		}
		if rows > 0 && first == 0 {
			first = at
		}
		if w == nil && rows > want {
			kill()
			meter.Stop()
			return Result{}, fmt.Errorf("table %s holds %d rows, more than the %d events: duplicates", r.table, rows, want)
		}
		if ok {
			all = at
			// A keyed run is right from the commit of the snapshot found right, not
			// from the poll that found it (a scan may have delayed that poll).
			if w != nil && w.rightAt.After(start) && w.rightAt.Sub(start) < at {
				all = w.rightAt.Sub(start)
				first = min(first, all) // the poll that saw the first rows may come after that commit
			}
		}
	}
	cpu, peak := meter.Stop()
	bySecond, machine := meter.coresBySecond(), meter.machineCoresBySecond()
	cores, machineCores := stats.Median(bySecond), stats.Median(machine)
	bySecond, machine = hundredths(bySecond), hundredths(machine)
	svc := cpuOf(services) - svc0

	switch {
	case exitAt > 0: // a bounded contender that has exited
	case c.bounded:
		// It ends on its own once its job has: wait for that, then check.
		select {
		case err := <-exited:
			if err != nil {
				return Result{}, fmt.Errorf("every row visible, then it failed (%v); its log, %s:\n%s", err, logPath, cmdtest.TailFile(logPath, 30))
			}
			exitAt = time.Since(start)
		case <-time.After(e.cfg.Timeout):
			kill()
			<-exited
			return Result{}, fmt.Errorf("every row visible, but still running %v later; its log, %s:\n%s", e.cfg.Timeout, logPath, cmdtest.TailFile(logPath, 30))
		}
	default:
		// Stop it as an operator would, then check that nothing more was written.
		if c.stop != nil {
			c.stop(r)
		}
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			logf("%s run %d: still running a minute after SIGTERM; killing it", c.name, n)
			kill()
			<-exited
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left behind
	st, err := icebergio.Stat(ctx, e.cat, r.table, "")
	if err != nil {
		return Result{}, fmt.Errorf("after the stop: %w", err)
	}
	var dataRows int64
	if w != nil {
		dataRows = st.Rows
		if st.Rows, err = w.check(ctx); err != nil {
			return Result{}, err
		}
	} else {
		if st.Rows != want {
			return Result{}, fmt.Errorf("after the stop, table %s holds %d rows, not %d", r.table, st.Rows, want)
		}
		if err := e.checkOffsets(ctx, r.table); err != nil {
			return Result{}, err
		}
	}
	res := Result{
		Contender:            c.name,
		Run:                  n,
		VisibleSeconds:       all.Seconds(),
		FirstVisibleSeconds:  first.Seconds(),
		EventsPerSecond:      float64(want) / all.Seconds(),
		CPUSeconds:           cpu.Seconds(),
		CoresMedian:          cores,
		CoresBySecond:        bySecond,
		MachineCoresBySecond: machine,
		MachineCoresMedian:   machineCores,
		PeakRSSBytes:         peak,
		ServicesCPUSeconds:   svc.Seconds(),
		Rows:                 st.Rows,
		Snapshots:            st.Snapshots,
		DataFiles:            st.DataFiles,
		ExitSeconds:          exitAt.Seconds(),
		DataRows:             dataRows,
	}
	if w != nil {
		if err := measureUpsertTable(ctx, r, &res); err != nil {
			return Result{}, err
		}
	}
	if c.after != nil {
		c.after(r, &res)
	}
	return res, nil
}

// connectHealth asks Kafka Connect's REST API (connect.sh's default port)
// for the connector's state: a task that failed stays failed while the
// worker lives on, so without this the run would wait for its timeout.
func connectHealth(r trial) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://127.0.0.1:8083/connectors/" + r.name + "/status")
	if err != nil {
		return nil // not up yet
	}
	defer resp.Body.Close()
	var st struct {
		Connector struct{ State, Trace string }
		Tasks     []struct {
			ID           int
			State, Trace string
		}
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	if st.Connector.State == "FAILED" {
		return fmt.Errorf("the connector failed: %s", firstLines(st.Connector.Trace, 3))
	}
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			return fmt.Errorf("task %d failed: %s", t.ID, firstLines(t.Trace, 3))
		}
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// servicePIDs are the processes of Kafka, MinIO and PostgreSQL, from the
// services' pid files.
func (e *env) servicePIDs() []int { return pidsOf([]string{"kafka", "minio", "postgres"}) }

// pidsOf are the pids that the service scripts recorded for the services
// named, in $HAADE_RUN/pids/NAME.pid; a service without one is left out.
func pidsOf(names []string) []int {
	dir := os.Getenv("HAADE_RUN")
	if dir == "" {
		dir = "/tmp/haade-services"
	}
	var pids []int
	for _, s := range names {
		b, err := os.ReadFile(filepath.Join(dir, "pids", s+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// versions reads the pinned versions out of the service scripts, so that
// the report says what ran.
func (e *env) versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	if out, err := exec.Command("git", "-C", e.root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		v["haade"] = strings.TrimSpace(string(out))
	}
	pins := map[string][]string{
		"kafka.sh":       {"KAFKA_VERSION"},
		"minio.sh":       {"MINIO_VERSION"},
		"python.sh":      {"PYSPARK_VERSION", "ICEBERG_VERSION"},
		"connect.sh":     {"CONNECT_VERSION", "ICEBERG_VERSION"},
		"flinknative.sh": {"FLINK_VERSION", "ICEBERG_VERSION", "KAFKA_CONNECTOR_VERSION"},
	}
	for file, names := range pins {
		b, err := os.ReadFile(filepath.Join(e.root, "testing/services", file))
		if err != nil {
			continue
		}
		for _, name := range names {
			// NAME=value, NAME="value" or NAME="${NAME:-value}"
			m := regexp.MustCompile(`(?m)^` + name + `="?(?:\$\{` + name + `:-)?([^\s}"#]+)`).FindSubmatch(b)
			if m != nil {
				v[strings.TrimSuffix(file, ".sh")+"."+strings.ToLower(name)] = string(m[1])
			}
		}
	}
	return v
}

// machine describes where the run was: cores and memory.
func machine() string {
	mem := ""
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(*mi.MemTotal)/(1<<20)) // kB
		}
	}
	return fmt.Sprintf("%d cores%s, %s/%s", runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH)
}

// hundredths rounds each value to two decimals, for the results' JSON.
func hundredths(xs []float64) []float64 {
	for i, x := range xs {
		xs[i] = math.Round(x*100) / 100
	}
	return xs
}

// bronzeArgs is the command line of bronze for trial r, on a runner that
// runnerArgs choose: the run's topic and tables on the shared services,
// from the topic's start, and --upsert for a keyed (--keys) workload.
func bronzeArgs(r trial, runnerArgs ...string) []string {
	args := append(runnerArgs,
		"--brokers="+brokers, "--topic="+r.topic,
		"--catalog-uri="+catalogURI, "--warehouse="+warehouse, "--s3-endpoint="+s3Endpoint,
		"--table="+r.table, "--dlq-table="+r.dlq, "--pipeline-id="+r.name,
		"--commit-interval="+r.cfg.CommitInterval.String(), "--start=earliest", "--metrics-addr=")
	if r.cfg.Keys > 0 {
		args = append(args, "--upsert")
	}
	return args
}
