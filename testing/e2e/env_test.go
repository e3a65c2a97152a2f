//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
)

const (
	brokers    = "127.0.0.1:9092"
	s3Endpoint = "http://127.0.0.1:9000"
	catalogURI = "postgres://haade:haade@127.0.0.1:5432/lakehouse?sslmode=disable"
	warehouse  = "s3://warehouse/"
	// namespace of every table the tier makes; never a dot inside.
	namespace = "e2e"
	// commitInterval is the window length the tests run bronze with.
	commitInterval = "2s"
)

var (
	repoRoot  string
	bronzeBin string
	// binDir holds the commands the tier builds; TestMain removes it.
	binDir string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	if repoRoot, err = cmdtest.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "haade-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = tmp
	// One build for every test: the pipeline runs as a subprocess, so that
	// kill -9 is a real crash.
	bronzeBin = filepath.Join(tmp, "bronze")
	if b := os.Getenv("HAADE_E2E_BRONZE"); b != "" {
		// A prebuilt binary, for example one built from another commit.
		bronzeBin = b
	} else if err := buildBronze(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "minioadmin", "AWS_SECRET_ACCESS_KEY": "minioadmin", "AWS_REGION": "us-east-1"} {
		os.Setenv(k, v)
	}
	return m.Run()
}

// buildBronze builds ./pipelines/bronze into dir, as bronzeBin.
func buildBronze(dir string) error {
	start := time.Now()
	if _, err := (cmdtest.Builder{Nice: 10}).Build(dir, filepath.Join(repoRoot, "pipelines/bronze")); err != nil {
		return fmt.Errorf("e2e: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e: built bronze in %v\n", time.Since(start).Round(time.Second))
	return nil
}

// mustScript runs testing/services/NAME.sh with args and returns its
// combined output; it fails t when the script fails.
func mustScript(t testing.TB, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := cmdtest.Script(repoRoot, nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s.sh %s: %v", name, strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	return out
}

// services starts each named service (postgres, minio, kafka) through its
// script. A service this call started is stopped when the test ends, unless
// HAADE_KEEP_SERVICES is set; one that was running already is left running.
// kcat is installed when it is missing.
func services(t *testing.T, names ...string) {
	t.Helper()
	if _, err := exec.LookPath("kcat"); err != nil {
		mustScript(t, "kcat", "install")
	}
	for _, n := range names {
		_, err := cmdtest.Script(repoRoot, nil, n, "status")
		wasRunning := err == nil
		mustScript(t, n, "start")
		if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
			t.Cleanup(func() {
				if _, err := cmdtest.Script(repoRoot, nil, n, "stop"); err != nil {
					t.Errorf("%s.sh stop: %v", n, err)
				}
			})
		}
	}
}

// env is one test's topic, tables and pipeline id, unique per run.
type env struct {
	t                       *testing.T
	name                    string
	topic, table, dlq, pipe string
	partitions              int
	dir                     string

	mu    sync.Mutex
	procs []*proc
	// more tables to drop at the end, such as copies Spark registered
	more []string
	// logs are the services' logs to show when the test fails
	logs []string
	// cat is the catalog the test's tables are in
	cat func(*env) icebergio.CatalogConfig
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newEnv starts PostgreSQL, MinIO and Kafka, and creates a fresh topic.
// When the test passes its topic is deleted and its tables are dropped,
// files and all; when it fails they are kept, and the logs of every bronze
// run are shown.
func newEnv(t *testing.T, name string, partitions int) *env {
	t.Helper()
	services(t, "postgres", "minio", "kafka")
	return startEnv(t, name, partitions, "the PostgreSQL catalog", (*env).catalog)
}

// startEnv makes a test's topic and names its tables, pipeline and
// directory, and arranges the end: on success the topic is deleted and the
// tables purged through the catalog that cat gives; on failure, the logs of
// every bronze run and of the services in e.logs are shown and kept.
func startEnv(t *testing.T, name string, partitions int, where string, cat func(*env) icebergio.CatalogConfig) *env {
	t.Helper()
	id := randomID()
	e := &env{
		t: t, name: name, partitions: partitions, dir: t.TempDir(),
		topic: "e2e-" + name + "-" + id,
		table: namespace + "." + name + "_" + id, dlq: namespace + "." + name + "_" + id + "_dlq",
		pipe: "e2e-" + name + "-" + id, cat: cat,
	}
	mustScript(t, "kafka", "create-topic", e.topic, fmt.Sprint(partitions))
	t.Logf("topic %s, tables %s and %s in %s, pipeline %s", e.topic, e.table, e.dlq, where, e.pipe)
	t.Cleanup(func() {
		e.mu.Lock()
		procs := e.procs
		e.mu.Unlock()
		for _, p := range procs {
			if p.running() {
				p.kill9()
			}
		}
		if t.Failed() {
			for _, p := range procs {
				t.Logf("----- %s (%s) -----\n%s", p.name, p.log, cmdtest.TailFile(p.log, 40))
			}
			for _, l := range e.logs {
				t.Logf("----- %s -----\n%s", l, cmdtest.TailFile(l, 40))
			}
			// The test's directory goes away with it: keep the logs.
			keep := filepath.Join(os.TempDir(), "haade-e2e-logs", e.pipe)
			if err := os.MkdirAll(keep, 0o755); err == nil {
				files, _ := filepath.Glob(filepath.Join(e.dir, "*.log"))
				for _, f := range files {
					if b, err := os.ReadFile(f); err == nil {
						_ = os.WriteFile(filepath.Join(keep, filepath.Base(f)), b, 0o644)
					}
				}
				t.Logf("logs kept in %s", keep)
			}
			t.Logf("kept topic %s and tables %s, %s for inspection", e.topic, e.table, e.dlq)
			return
		}
		e.purge(e.cat(e), append([]string{e.table, e.dlq}, e.more...)...)
		if _, err := cmdtest.Script(repoRoot, nil, "kafka", "topics", "--delete", "--topic", e.topic); err != nil {
			t.Logf("deleting topic %s: %v", e.topic, err)
		}
	})
	return e
}

func (e *env) catalog() icebergio.CatalogConfig {
	return icebergio.CatalogConfig{Type: "sql", Name: "local", URI: catalogURI, Warehouse: warehouse, S3Endpoint: s3Endpoint}
}

// purge removes the tables' objects from MinIO (every file under their
// locations, which registered copies share) and drops them from the catalog
// of cfg.
func (e *env) purge(cfg icebergio.CatalogConfig, idents ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := cfg.Open(ctx)
	if err != nil {
		e.t.Logf("cleanup: %v", err)
		return
	}
	defer closeCatalog(cat)
	if err := icebergtest.Purge(ctx, cat, s3Endpoint, idents...); err != nil {
		e.t.Logf("cleanup: %v", err)
	}
}

// proc is one bronze process.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit status, once done is closed
}

// bronzeArgs is the command line of every run of this test.
func (e *env) bronzeArgs(extra ...string) []string {
	return append([]string{
		"--runner=direct",
		"--brokers=" + brokers,
		"--topic=" + e.topic,
		"--warehouse=" + warehouse,
		"--s3-endpoint=" + s3Endpoint,
		"--catalog-uri=" + catalogURI,
		"--table=" + e.table,
		"--dlq-table=" + e.dlq,
		"--pipeline-id=" + e.pipe,
		"--commit-interval=" + commitInterval,
		"--metrics-addr=",
	}, extra...)
}

// startBronze starts the bronze binary with the test's flags plus extra.
func (e *env) startBronze(extra ...string) *proc {
	e.t.Helper()
	e.mu.Lock()
	n := len(e.procs) + 1
	e.mu.Unlock()
	p := &proc{name: fmt.Sprintf("bronze run %d %v", n, extra), log: filepath.Join(e.dir, fmt.Sprintf("bronze-%d.log", n)), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		e.t.Fatal(err)
	}
	p.cmd = exec.Command(bronzeBin, e.bronzeArgs(extra...)...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.Env = os.Environ()
	if err := p.cmd.Start(); err != nil {
		f.Close()
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	e.t.Logf("started %s, pid %d", p.name, p.cmd.Process.Pid)
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

// kill9 is a crash: SIGKILL, no chance to commit or clean up.
func (p *proc) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for the process to exit and returns its exit error.
func (p *proc) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %v", p.name, timeout)
	}
}

// terminate asks for a clean stop (SIGTERM: the reads end, the last windows
// commit) and waits for exit 0.
func (e *env) terminate(p *proc, timeout time.Duration) {
	e.t.Helper()
	if !p.running() {
		e.t.Fatalf("%s exited by itself before it was stopped: %v\n%s", p.name, p.err, cmdtest.TailFile(p.log, 30))
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.wait(timeout); err != nil {
		e.t.Fatalf("%s after SIGTERM: %v\n%s", p.name, err, cmdtest.TailFile(p.log, 30))
	}
}

// runBounded runs bronze --bounded to completion and wants exit 0.
func (e *env) runBounded(timeout time.Duration, extra ...string) time.Duration {
	e.t.Helper()
	start := time.Now()
	p := e.startBronze(append([]string{"--bounded"}, extra...)...)
	if err := p.wait(timeout); err != nil {
		if p.running() {
			p.kill9()
		}
		e.t.Fatalf("%s: %v\n%s", p.name, err, cmdtest.TailFile(p.log, 40))
	}
	took := time.Since(start)
	e.t.Logf("%s finished in %v:\n%s", p.name, took.Round(100*time.Millisecond), grepSummary(p.log))
	return took
}

// grepSummary returns the summary lines that a bounded run prints on stdout.
func grepSummary(path string) string {
	b, _ := os.ReadFile(path)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, "level=") && !strings.HasPrefix(l, "{") && strings.TrimSpace(l) != "" {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n")
}

// countLines counts the log lines of path that contain s.
func countLines(path, s string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte(s))
}

// writeFile writes b to a file in the test's directory.
func (e *env) writeFile(name string, b []byte) string {
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// closeCatalog releases the catalog's database connections.
func closeCatalog(cat any) {
	if c, ok := cat.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
