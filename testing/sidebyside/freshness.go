package main

// The freshness mode (--freshness): each contender streams while a paced
// producer sends --rates events/s for --duration; afterwards every record's
// freshness, (commit time of the snapshot that added it - its Kafka
// timestamp), is read back from the table, and the highest rate at which the
// lag stayed flat is reported.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
)

// FreshReport is one freshness invocation's results.
type FreshReport struct {
	Date           string            `json:"date"`
	Command        string            `json:"command"`
	Machine        string            `json:"machine"`
	Partitions     int               `json:"partitions"`
	CommitInterval string            `json:"commit_interval"`
	DurationS      float64           `json:"duration_s"`
	Rule           flatRule          `json:"flat_rule"`
	Versions       map[string]string `json:"versions"`
	Results        []FreshResult     `json:"results"`
	// Sustainable is each contender's highest rate (events/s) that was flat
	// and drained; 0 when none of the rates tried was.
	Sustainable map[string]int `json:"sustainable"`
}

// FreshResult is one contender at one rate.
type FreshResult struct {
	Contender string `json:"contender"`
	// Commit says how the contender commits: its flag and value.
	Commit string `json:"commit"`
	Rate   int    `json:"rate"`
	// Produced counts the measured records (the warm-up's left out);
	// AchievedRate is Produced over the producer's wall time, and
	// MaxBehindS the most its sends fell behind the schedule.
	Produced     int64   `json:"produced"`
	AchievedRate float64 `json:"achieved_rate"`
	MaxBehindS   float64 `json:"max_behind_s"`
	// Freshness of every measured record, in ms.
	P50Ms int64 `json:"p50_ms"`
	P99Ms int64 `json:"p99_ms"`
	MaxMs int64 `json:"max_ms"`
	// NewestP50Ms is, over the snapshots, the median lag of each one's
	// freshest record: how long a commit takes to follow the newest record
	// it holds (the window's close, the watermark, Parquet, the commit).
	NewestP50Ms int64 `json:"newest_p50_ms"`
	// Drained: every record was visible within --drain-timeout of the
	// producer's end, DrainS after it.
	Drained bool    `json:"drained"`
	DrainS  float64 `json:"drain_s"`
	// Behind counts the records not yet visible when the drain timed out
	// (0 when drained). The stop that follows may still commit them.
	Behind int64 `json:"behind"`
	// The exactly-once check over every record, warm-up included.
	Found      int64 `json:"found"`
	Duplicates int64 `json:"duplicates"`
	Missing    int64 `json:"missing"`
	Snapshots  int   `json:"snapshots"`
	// CPU of the contender's process tree while the producer ran, per wall
	// second, and its peak RSS from launch.
	CPUPerWallS  float64         `json:"cpu_per_wall_s"`
	PeakRSSBytes int64           `json:"peak_rss_bytes"`
	Verdict      flatVerdict     `json:"verdict"`
	Seconds      []SecondPoint   `json:"per_second"`
	Points       []SnapshotPoint `json:"per_snapshot"`
}

// commitOf says how each contender was told to commit.
func commitOf(name string, every time.Duration) string {
	switch name {
	case "bronze":
		return "--commit-interval=" + every.String()
	case "spark":
		return "trigger(processingTime=" + every.String() + ")"
	case "connect":
		return "iceberg.control.commit.interval-ms=" + strconv.FormatInt(every.Milliseconds(), 10)
	}
	return ""
}

func measureFreshness(ctx context.Context, cfg Config, root string) (FreshReport, error) {
	e, cleanup, err := newEnv(cfg, root)
	if err != nil {
		return FreshReport{}, err
	}
	defer cleanup()
	if err := e.setUp(ctx); err != nil {
		return FreshReport{}, err
	}
	defer e.tearDown()
	rep := FreshReport{
		Date:           time.Now().UTC().Format(time.RFC3339),
		Command:        "go run ./testing/sidebyside " + strings.Join(os.Args[1:], " "),
		Machine:        machine(),
		Partitions:     cfg.Partitions,
		CommitInterval: cfg.CommitInterval.String(),
		DurationS:      cfg.Duration.Seconds(),
		Rule:           cfg.flatRule(),
		Versions:       e.versions(),
	}
	// The search: rates in increasing order, and a contender whose lag was
	// not flat at one rate does not run at the higher ones.
	search := newRateSearch(cfg.Rates)
	for _, rate := range search.rates {
		for _, name := range cfg.Contenders {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			if at, skip := search.skip(name); skip {
				logf("%s: skipping %d events/s, since its lag was not flat at %d", name, rate, at)
				continue
			}
			res, err := e.runFresh(ctx, contenderByName[name], rate)
			if err != nil {
				return rep, fmt.Errorf("%s at %d events/s: %w", name, rate, err)
			}
			logf("%s at %d events/s (%s): freshness p50 %.2fs p99 %.2fs max %.2fs; end lag %.2fs, slope %.3f s/s, flat %v %s; drained %v after %.1fs; %.2f CPU s per s",
				name, rate, res.Commit, float64(res.P50Ms)/1000, float64(res.P99Ms)/1000, float64(res.MaxMs)/1000,
				res.Verdict.EndLagS, res.Verdict.SlopeSS, res.Verdict.Flat, res.Verdict.Reason, res.Drained, res.DrainS, res.CPUPerWallS)
			rep.Results = append(rep.Results, res)
			search.record(res)
		}
	}
	return rep, nil
}

// runFresh runs one contender at one rate on a topic of its own.
func (e *env) runFresh(ctx context.Context, c contender, rate int) (FreshResult, error) {
	name := fmt.Sprintf("%s_%s_r%d", c.name, e.id, rate)
	topic := fmt.Sprintf("freshness-%s-%s-%d", e.id, c.name, rate)
	if _, err := cmdtest.Script(e.root, nil, "kafka", "create-topic", topic, strconv.Itoa(e.cfg.Partitions)); err != nil {
		return FreshResult{}, err
	}
	// The contenders' commands read e.topic; tearDown deletes it and e.topics.
	if strings.HasPrefix(e.topic, "freshness-") {
		e.topics = append(e.topics, e.topic)
	}
	e.topic = topic
	r, err := e.newTrial(c, "freshness-", name)
	if err != nil {
		return FreshResult{}, err
	}
	prod, err := newPacedProducer(topic, e.cfg.Partitions, e.cfg.Seed, min(max(rate, 1000), 100_000))
	if err != nil {
		return FreshResult{}, err
	}
	defer prod.Close()

	run, err := e.launch(c, r, name)
	if err != nil {
		return FreshResult{}, err
	}
	defer run.kill()
	res := FreshResult{Contender: c.name, Commit: commitOf(c.name, e.cfg.CommitInterval), Rate: rate}

	// Warm-up: one record per partition, and wait until the contender has
	// committed them, so that its start-up is not counted as lag.
	logf("%s at %d events/s: launched into %s (%s); warming up", c.name, rate, r.table, res.Commit)
	warm := int64(e.cfg.Partitions)
	if err := prod.burst(ctx, int(warm)); err != nil {
		return res, err
	}
	if _, err := run.waitRows(ctx, r, func(n int64) bool { return n >= warm }, e.cfg.Timeout); err != nil {
		return res, fmt.Errorf("warm-up: %w", err)
	}

	logf("%s: producing %d events/s for %v", c.name, rate, e.cfg.Duration)
	cpu0 := run.meter.cpuNow()
	from := time.Now()
	type paced struct {
		st  paceStats
		err error
	}
	done := make(chan paced, 1)
	pctx, stopProducing := context.WithCancel(ctx) // a contender that dies stops the producer
	defer stopProducing()
	go func() {
		st, err := prod.run(pctx, rate, e.cfg.Duration)
		done <- paced{st, err}
	}()
	var ps paced
	health := time.NewTicker(time.Second)
	defer health.Stop()
	for waiting := true; waiting; {
		select {
		case ps = <-done:
			waiting = false
		case err := <-run.exited:
			return res, fmt.Errorf("exited while the producer ran (%v); its log, %s:\n%s", err, run.logPath, cmdtest.TailFile(run.logPath, 30))
		case <-health.C:
			if c.health != nil {
				if err := c.health(r); err != nil {
					return res, fmt.Errorf("%w; its log, %s:\n%s", err, run.logPath, cmdtest.TailFile(run.logPath, 30))
				}
			}
		}
	}
	if ps.err != nil {
		return res, ps.err
	}
	wall := time.Since(from)
	res.CPUPerWallS = (run.meter.cpuNow() - cpu0).Seconds() / wall.Seconds()
	res.Produced = ps.st.Sent
	res.AchievedRate = float64(ps.st.Sent) / ps.st.Elapsed.Seconds()
	res.MaxBehindS = ps.st.MaxBehind.Seconds()
	produced := prod.produced()
	var total int64
	for _, n := range produced {
		total += n
	}
	if total != warm+ps.st.Sent {
		return res, fmt.Errorf("the producer sent %d records but Kafka acknowledged %d", warm+ps.st.Sent, total)
	}

	ended := time.Now()
	got, err := run.waitRows(ctx, r, func(n int64) bool { return n >= total }, e.cfg.DrainTimeout)
	res.Drained = err == nil
	res.DrainS = time.Since(ended).Seconds()
	if err != nil && !isDrainTimeout(err) {
		return res, err
	}
	if !res.Drained {
		res.Behind = total - got
		logf("%s at %d events/s: %d of %d rows visible %v after the producer ended; not drained", c.name, rate, got, total, e.cfg.DrainTimeout)
	}
	res.PeakRSSBytes = run.stopMeter()
	run.stop(c.name)

	snaps, err := readSnapshots(ctx, e.cat, r.table)
	if err != nil {
		return res, err
	}
	a := attribute(snaps, produced, from.UnixMilli())
	res.Found, res.Duplicates, res.Missing = a.Found, a.Duplicates, a.Missing
	res.Snapshots = len(a.Snapshots)
	res.P50Ms, res.P99Ms = percentile(a.Lags, 50), percentile(a.Lags, 99)
	if len(a.Lags) > 0 {
		res.MaxMs = a.Lags[len(a.Lags)-1]
	}
	res.Seconds, res.Points = a.Seconds, a.Snapshots
	res.NewestP50Ms = newestP50(a.Snapshots)
	res.Verdict = e.cfg.flatRule().judge(a.Seconds)
	if !res.Drained {
		res.Verdict.Flat = false
		res.Verdict.Reason = strings.TrimPrefix(res.Verdict.Reason+"; not drained", "; ")
	}
	switch {
	case a.Duplicates > 0 || a.Unexpected > 0:
		return res, fmt.Errorf("table %s: %d duplicate rows and %d rows that were never produced", r.table, a.Duplicates, a.Unexpected)
	case res.Drained && a.Missing > 0:
		return res, fmt.Errorf("table %s: its row count reached %d, yet %d produced records are not in its snapshots' added files", r.table, total, a.Missing)
	}
	return res, nil
}

// launched is a running contender.
type launched struct {
	cmd     *exec.Cmd
	meter   *treeMeter
	exited  chan error
	logPath string
	logFile *os.File
	health  func(trial) error
	metered bool // the meter was stopped
}

// stopMeter stops the meter, once, and returns the peak RSS.
func (l *launched) stopMeter() int64 {
	if l.metered {
		return 0
	}
	l.metered = true
	_, peak := l.meter.Stop()
	return peak
}

// launch starts a contender in a process group of its own, its output to a
// log that outlives the run, metered from the start.
func (e *env) launch(c contender, r trial, name string) (*launched, error) {
	cmd, err := c.command(r)
	if err != nil {
		return nil, err
	}
	logDir := filepath.Join(os.TempDir(), "haade-sidebyside-logs", e.id)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	l := &launched{cmd: cmd, exited: make(chan error, 1), logPath: filepath.Join(logDir, name+".log"), health: c.health}
	if l.logFile, err = os.Create(l.logPath); err != nil {
		return nil, err
	}
	cmd.Dir = e.root
	cmd.Stdout, cmd.Stderr = l.logFile, l.logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	runtime.GC()
	if err := cmd.Start(); err != nil {
		l.logFile.Close()
		return nil, err
	}
	l.meter = meterTree(cmd.Process.Pid, sampleEvery)
	go func() { l.exited <- cmd.Wait() }()
	return l, nil
}

// kill ends the whole process group at once; it is safe after stop.
func (l *launched) kill() {
	l.stopMeter()
	if l.cmd.ProcessState == nil {
		_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
	}
	l.logFile.Close()
}

// stop sends SIGTERM, as an operator would, waits a minute at most, then
// kills what is left of the group.
func (l *launched) stop(name string) {
	_ = syscall.Kill(l.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(time.Minute):
		logf("%s: still running a minute after SIGTERM; killing it", name)
		_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
		<-l.exited
	}
	_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL) // anything it left behind
}

// errDrainTimeout is waitRows' error when the rows did not come in time.
var errDrainTimeout = errors.New("timed out")

func isDrainTimeout(err error) bool { return errors.Is(err, errDrainTimeout) }

// cpuNow samples the tree and returns the CPU time of every process seen in
// it so far.
func (m *treeMeter) cpuNow() time.Duration {
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	var cpu time.Duration
	for pid, c := range m.cpu {
		cpu += c - m.base[pid]
	}
	return cpu
}

// newEnv makes what every run shares, short of the services: the AWS
// variables the JVM contenders read MinIO's credentials from, an id and a
// scratch directory (removed by cleanup).
func newEnv(cfg Config, root string) (*env, func(), error) {
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	var idb [3]byte
	_, _ = rand.Read(idb[:])
	e := &env{cfg: cfg, root: root, id: hex.EncodeToString(idb[:])}
	e.topic = "sidebyside-" + e.id
	var err error
	if e.dir, err = os.MkdirTemp("", "haade-sidebyside-"); err != nil {
		return nil, nil, err
	}
	return e, func() { os.RemoveAll(e.dir) }, nil
}

// waitRows polls the table's current snapshot until ok(rows), the
// contender exits or fails, or timeout passes (errDrainTimeout). It
// returns the last count read.
func (l *launched) waitRows(ctx context.Context, r trial, ok func(int64) bool, timeout time.Duration) (int64, error) {
	deadline := time.After(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var rows int64
	for {
		select {
		case <-ctx.Done():
			return rows, ctx.Err()
		case err := <-l.exited:
			l.exited <- err // for stop
			return rows, fmt.Errorf("exited (%v); its log, %s:\n%s", err, l.logPath, cmdtest.TailFile(l.logPath, 30))
		case <-deadline:
			return rows, errDrainTimeout
		case <-tick.C:
		}
		if l.health != nil {
			if err := l.health(r); err != nil {
				return rows, fmt.Errorf("%w; its log, %s:\n%s", err, l.logPath, cmdtest.TailFile(l.logPath, 30))
			}
		}
		st, err := icebergio.Stat(ctx, r.cat, r.table, "")
		if err != nil {
			continue // not created yet, or a transient error: poll again
		}
		rows = st.Rows
		if ok(rows) {
			return rows, nil
		}
	}
}
