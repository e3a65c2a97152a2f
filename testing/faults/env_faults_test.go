//go:build faults

package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/faults/kit"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	brokers    = "127.0.0.1:9092"
	s3Endpoint = "http://127.0.0.1:9000"
	catalogURI = "postgres://haade:haade@127.0.0.1:5432/lakehouse?sslmode=disable"
	warehouse  = "s3://warehouse/"
)

var (
	root      string
	bronzeBin string
	runDir    string // HAADE_RUN, where the services keep their pid files
	toStop    []string

	rowsMu sync.Mutex
	rows   []row
)

// row is one line of the table.
type row struct {
	Case    string
	Outcome string
	Tally   kit.Tally
	Skipped bool
}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	if root, err = cmdtest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runDir = os.Getenv("HAADE_RUN")
	if runDir == "" {
		runDir = "/tmp/haade-services"
	}
	start := time.Now()
	bins, done := cmdtest.BuildTemp(filepath.Join(root, "pipelines/bronze"))
	defer done()
	bronzeBin = bins[0]
	fmt.Fprintf(os.Stderr, "faults: built bronze in %v\n", time.Since(start).Round(time.Second))
	for _, n := range []string{"postgres", "minio", "kafka"} {
		_, err := cmdtest.Script(root, nil, n, "status")
		if _, err2 := cmdtest.Script(root, nil, n, "start"); err2 != nil {
			fmt.Fprintln(os.Stderr, err2)
			return 1
		}
		if err != nil && os.Getenv("HAADE_KEEP_SERVICES") == "" {
			toStop = append(toStop, n)
		}
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1"} {
		os.Setenv(k, v)
	}
	restore, err := durableCatalog()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	restore()
	table := renderTable()
	fmt.Println(table)
	if p := os.Getenv("HAADE_FAULTS_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	for i := len(toStop) - 1; i >= 0; i-- {
		if _, err := cmdtest.Script(root, nil, toStop[i], "stop"); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

func renderTable() string {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	var b strings.Builder
	b.WriteString("| case | outcome | produced | lost | duplicated |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.Skipped {
			fmt.Fprintf(&b, "| %s | %s | | | |\n", r.Case, r.Outcome)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |\n", r.Case, r.Outcome, r.Tally.Produced, r.Tally.Lost, r.Tally.Duplicated)
	}
	return b.String()
}

func record(r row) {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	rows = append(rows, r)
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// value is the i-th record of a case: a valid event, and every 100th one of
// the parser's malformed corpus.
func value(i int) []byte {
	if i%100 == 99 {
		return event.MalformedCorpus[(i/100)%len(event.MalformedCorpus)]
	}
	return fmt.Appendf(nil, `{"source": "faults", "title": "fault #%d", "timestamp": "2026-05-19T10:%02d:%02dZ", "n": %d}`, i, (i/60)%60, i%60, i)
}

// fcase is one case: its topic, tables, pipeline id and what was produced.
type fcase struct {
	t                       *testing.T
	name                    string
	topic, table, dlq, pipe string
	dir                     string
	cat                     icebergio.CatalogConfig
	keys                    []kit.Key
	procs                   []*proc
	notes                   []string
	failed                  []string
	sent                    int
}

func newCase(t *testing.T, name string, partitions int32) *fcase {
	t.Helper()
	id := randomID()
	c := &fcase{t: t, name: name, topic: "faults-" + name + "-" + id,
		table: "faults." + strings.ReplaceAll(name, "-", "_") + "_" + id, pipe: "faults-" + name + "-" + id, dir: t.TempDir(),
		cat: icebergio.CatalogConfig{Type: "sql", Name: "local", URI: catalogURI, Warehouse: warehouse, S3Endpoint: s3Endpoint}}
	c.dlq = c.table + "_dlq"
	c.createTopic(partitions)
	t.Cleanup(func() {
		for _, p := range c.procs {
			if p.running() {
				p.signal(syscall.SIGKILL)
				<-p.done
			}
		}
		if t.Failed() {
			for _, p := range c.procs {
				t.Logf("----- %s (%s) -----\n%s", p.name, p.log, cmdtest.TailFile(p.log, 25))
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if cat, err := c.cat.Open(ctx); err == nil {
			_ = icebergtest.Purge(ctx, cat, s3Endpoint, c.table, c.dlq)
		}
		adm := kadm.NewClient(c.client())
		_, _ = adm.DeleteTopic(ctx, c.topic)
	})
	return c
}

func (c *fcase) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers), kgo.RetryTimeout(90 * time.Second)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

func (c *fcase) createTopic(partitions int32) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := kadm.NewClient(c.client()).CreateTopic(ctx, partitions, 1, nil, c.topic)
	if err == nil {
		err = r.Err
	}
	if err != nil {
		c.t.Fatalf("create topic %s: %v", c.topic, err)
	}
}

// produce sends n more records (value numbering continues) and records their keys.
func (c *fcase) produce(n int) {
	c.produceValues(n, value)
}

func (c *fcase) produceValues(n int, v func(i int) []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := c.sent
	keys, err := kit.Produce(ctx, []kgo.Opt{kgo.SeedBrokers(brokers), kgo.RetryTimeout(90 * time.Second)}, c.topic, n,
		func(i int) []byte { return v(base + i) })
	if err != nil {
		c.t.Fatal(err)
	}
	c.sent += n
	c.keys = append(c.keys, keys...)
}

// tally counts what the tables hold against what was produced.
func (c *fcase) tally() kit.Tally {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seen, err := kit.Seen(ctx, c.cat, c.topic, c.table, c.dlq)
	if err != nil {
		c.t.Fatal(err)
	}
	return kit.Compare(c.keys, seen)
}

// args is bronze's command line for this case.
func (c *fcase) args(extra ...string) []string {
	return append([]string{"--runner=direct", "--brokers=" + brokers, "--topic=" + c.topic,
		"--warehouse=" + c.cat.Warehouse, "--s3-endpoint=" + s3Endpoint, "--catalog-uri=" + c.cat.URI,
		"--table=" + c.table, "--dlq-table=" + c.dlq, "--pipeline-id=" + c.pipe,
		"--commit-interval=1s", "--metrics-addr="}, extra...)
}

// proc is one bronze process.
type proc struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
}

func (c *fcase) start(extra ...string) *proc {
	c.t.Helper()
	return c.startArgs(c.args(extra...))
}

func (c *fcase) startArgs(args []string) *proc {
	c.t.Helper()
	n := len(c.procs) + 1
	p := &proc{name: fmt.Sprintf("bronze run %d", n), log: filepath.Join(c.dir, fmt.Sprintf("bronze-%d.log", n)), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		c.t.Fatal(err)
	}
	p.cmd = exec.Command(bronzeBin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.procs = append(c.procs, p)
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

// wait returns the exit error, or errTimeout.
func (p *proc) wait(d time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		return errTimeout
	}
}

var errTimeout = errors.New("still running")

// exit describes how a process ended.
func exit(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit 0"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + ws.Signal().String()
		}
		return "exit " + strconv.Itoa(ee.ExitCode())
	default:
		return err.Error()
	}
}

// commits counts the commit log lines of a process so far.
func (p *proc) commits() int {
	b, _ := os.ReadFile(p.log)
	return strings.Count(string(b), "msg=committed")
}

func (p *proc) logHas(s string) bool {
	b, _ := os.ReadFile(p.log)
	return strings.Contains(string(b), s)
}

// waitCommits waits until the process logged at least n commits.
func (c *fcase) waitCommits(p *proc, n int, d time.Duration) {
	c.t.Helper()
	wait.For(c.t, d, func() error {
		if have := p.commits(); have < n {
			if !p.running() {
				c.t.Fatalf("%s exited (%s) before %d commits:\n%s", p.name, exit(p.err), n, cmdtest.TailFile(p.log, 20))
			}
			return fmt.Errorf("%s made %d commits, want %d:\n%s", p.name, have, n, cmdtest.TailFile(p.log, 20))
		}
		return nil
	})
}

// bounded runs bronze --bounded to its end and returns how it ended.
func (c *fcase) bounded(extra ...string) (*proc, error) {
	c.t.Helper()
	p := c.start(append([]string{"--bounded"}, extra...)...)
	err := p.wait(4 * time.Minute)
	if errors.Is(err, errTimeout) {
		p.signal(syscall.SIGKILL)
		<-p.done
	}
	return p, err
}

// recover runs bronze --bounded once more, as an operator would after the
// fault, and wants exit 0.
func (c *fcase) recover() {
	c.t.Helper()
	p, err := c.bounded()
	if err != nil {
		c.fail("the recovery run: %s: %s", exit(err), lastLine(p.log))
	}
}

// terminate sends SIGTERM and waits up to d for the exit.
func (c *fcase) terminate(p *proc, d time.Duration) error {
	p.signal(syscall.SIGTERM)
	err := p.wait(d)
	if errors.Is(err, errTimeout) {
		p.signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("no exit within %v of SIGTERM", d)
	}
	return err
}

func (c *fcase) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// fail marks the case FAIL with a reason; the row says why.
func (c *fcase) fail(format string, args ...any) {
	c.failed = append(c.failed, fmt.Sprintf(format, args...))
}

// finish tallies, records the row and fails the test on any finding.
func (c *fcase) finish() {
	c.t.Helper()
	tl := c.tally()
	if !tl.OK() {
		c.fail("%v", tl)
	}
	outcome := "ok"
	if len(c.failed) > 0 {
		outcome = "FAIL: " + strings.Join(c.failed, "; ")
	}
	if len(c.notes) > 0 {
		outcome += " (" + strings.Join(c.notes, "; ") + ")"
	}
	record(row{Case: c.name, Outcome: strings.ReplaceAll(outcome, "|", "/"), Tally: tl})
	c.t.Logf("%s: %s; %v", c.name, outcome, tl)
	if len(c.failed) > 0 {
		c.t.Errorf("%s", outcome)
	}
}

// service helpers: the pid a script recorded, a crash, a start.
func servicePid(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "pids", name+".pid"))
	if err != nil {
		t.Fatalf("pid of %s: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid of %s: %v", name, err)
	}
	return pid
}

// crash kills the service the hard way (SIGKILL; for PostgreSQL SIGQUIT,
// its immediate shutdown, which skips the checkpoint like a crash) and
// waits until the process is gone.
func crash(t *testing.T, name string) {
	t.Helper()
	pid := servicePid(t, name)
	sig := syscall.SIGKILL
	if name == "postgres" {
		sig = syscall.SIGQUIT
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill %s (%d): %v", name, pid, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = wait.Until(ctx, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("%s (%d) still runs", name, pid)
		}
		return nil
	})
}

func startService(t *testing.T, name string) {
	t.Helper()
	if _, err := cmdtest.Script(root, nil, name, "start"); err != nil {
		t.Fatal(err)
	}
}

// lastLine is the last line of a log, shortened, for the table.
func lastLine(path string) string {
	l := cmdtest.TailFile(path, 1)
	if len(l) > 160 {
		l = l[:160] + "..."
	}
	return l
}
