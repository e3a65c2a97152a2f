package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/kafkatest"
)

// asCommand in the environment makes the test binary the benchmark command:
// the parent re-executes os.Executable() for its broker and its children.
const asCommand = "HAADE_BENCHMARK_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testConfig is the command line's defaults with a small topic.
func testConfig(events, partitions int) Config {
	return Config{Events: events, Mode: "all", CommitInterval: 10 * time.Second, Partitions: partitions, BadRatio: 0.01,
		Seed: 1, LoopGoroutines: 2, LoopChunk: 256 << 10, Repeat: 1,
		Counts: []int{partitions}, Modes: []string{"loop", "beam"}, Topic: topic, Readers: 8}
}

// runParent runs parent with cfg within limit, fails the test on an error,
// logs its output and removes the child logs when the test ends.
func runParent(t *testing.T, cfg Config, limit time.Duration) ([]result, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out bytes.Buffer
	rs, err := parent(ctx, cfg, &out)
	if m := regexp.MustCompile(`child logs in (\S+)`).FindStringSubmatch(out.String()); m != nil {
		t.Cleanup(func() { os.RemoveAll(m[1]) })
	}
	if err != nil {
		t.Fatalf("parent: %v\n%s", err, out.String())
	}
	t.Logf("\n%s", out.String())
	return rs, &out
}

var ratioLine = regexp.MustCompile(`(?m)^bronze / loop, (process start to exit|run start to last commit): (\d+\.\d\d) \(median (\d+\.\d\d)\)$`)

// With --broker-process the parent preloads one broker process, times each
// child from exec to exit, checks its tables after it exits and prints the
// ratio of both timings.
func TestParentBrokerProcess(t *testing.T) {
	t.Setenv(asCommand, "1")
	cfg := testConfig(20_000, 2)
	cfg.BrokerProcess = true
	rs, out := runParent(t, cfg, 2*time.Minute)

	type counts struct {
		Mode        string
		Events      int
		BronzeAndDL int64
		Brokered    bool
	}
	var got []counts
	for _, r := range rs {
		got = append(got, counts{r.Mode, r.Events, r.Bronze + r.DLQ, r.BrokerRSS > 0})
		if !(r.ProcessSeconds > r.Seconds && r.Seconds > 0) {
			t.Errorf("%s: process %.3fs, run %.3fs: want process > run > 0", r.Mode, r.ProcessSeconds, r.Seconds)
		}
		if r.ProcessCPUSeconds <= 0 || r.Bronze == 0 || r.DLQ == 0 {
			t.Errorf("%s: process CPU %.3fs, %d bronze, %d dead letters: want all > 0", r.Mode, r.ProcessCPUSeconds, r.Bronze, r.DLQ)
		}
	}
	want := []counts{{"loop", 20_000, 20_000, true}, {"beam", 20_000, 20_000, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if len(rs) == 2 && (rs[0].Bronze != rs[1].Bronze || rs[0].DLQ != rs[1].DLQ) {
		t.Errorf("loop %d+%d rows, beam %d+%d: want the same topic read by both", rs[0].Bronze, rs[0].DLQ, rs[1].Bronze, rs[1].DLQ)
	}
	var timings []string
	for _, m := range ratioLine.FindAllStringSubmatch(out.String(), -1) {
		timings = append(timings, m[1])
		if m[2] != m[3] {
			t.Errorf("one pair: ratio %s, median %s: want the same", m[2], m[3])
		}
	}
	if diff := cmp.Diff([]string{"process start to exit", "run start to last commit"}, timings); diff != "" {
		t.Errorf("ratio lines (-want +got):\n%s\noutput:\n%s", diff, out.String())
	}
}

// Bad --brokers and --dir combinations are one error line naming the flag,
// and exit code 2, before anything starts.
func TestBrokersAndDirFlags(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	used := filepath.Join(dir, "used")
	for _, p := range []string{file, filepath.Join(used, "catalog.db")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const addr = "--brokers=127.0.0.1:9092"
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"brokers without dir", []string{"--mode=loop", addr}, "--dir"},
		{"dir without brokers", []string{"--mode=beam", "--dir=" + dir}, "--dir"},
		{"brokers in mode all", []string{addr, "--dir=" + dir}, "--brokers"},
		{"brokers in mode broker", []string{"--mode=broker", addr, "--dir=" + dir}, "--brokers"},
		{"no port", []string{"--mode=loop", "--brokers=localhost", "--dir=" + dir}, "--brokers"},
		{"port 0", []string{"--mode=loop", "--brokers=localhost:0", "--dir=" + dir}, "--brokers"},
		{"one of two bad", []string{"--mode=loop", "--brokers=127.0.0.1:9092,:x", "--dir=" + dir}, "--brokers"},
		{"dir missing", []string{"--mode=loop", addr, "--dir=" + filepath.Join(dir, "none")}, "--dir"},
		{"dir a file", []string{"--mode=loop", addr, "--dir=" + file}, "--dir"},
		{"dir with a catalog", []string{"--mode=beam", addr, "--dir=" + used}, "--dir"},
		{"kafka in mode beam", []string{"--mode=beam", "--kafka=127.0.0.1:9092"}, "--kafka"},
		{"kafka with a broker process", []string{"--kafka=127.0.0.1:9092", "--broker-process"}, "--kafka"},
		{"kafka not host:port", []string{"--kafka=localhost"}, "--kafka"},
		{"partitions list in mode loop", []string{"--mode=loop", "--partitions=8,16"}, "--partitions"},
		{"partitions list with a broker process", []string{"--partitions=8,16", "--broker-process"}, "--partitions"},
		{"partitions not counts", []string{"--partitions=8,x"}, "--partitions"},
		{"modes", []string{"--modes=loop,spark"}, "--modes"},
		{"readers", []string{"--kafka-readers=0"}, "--kafka-readers"},
		{"keys with malformed events", []string{"--modes=beam", "--keys=10"}, "--keys"},
		{"keys with the loop", []string{"--bad-ratio=0", "--keys=10"}, "--keys"},
		{"keys above the events", []string{"--modes=beam", "--bad-ratio=0", "--events=5", "--keys=10"}, "--keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self, tc.args...)
			cmd.Env = append(os.Environ(), asCommand+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := -1
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "benchmark: "+tc.flag) || stdout.Len() != 0 {
				t.Fatalf("exit %d (%v), stderr %q, stdout %q: want 2 and one line naming %s", code, err, stderr.String(), stdout.String(), tc.flag)
			}
		})
	}
	// The parent's combination passes.
	cfg := testConfig(10, 1)
	cfg.Mode, cfg.Brokers, cfg.Dir = "beam", "127.0.0.1:9092,[::1]:9093", dir
	if err := cfg.validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
}

// With --kafka and a list of partition counts, the parent preloads one
// topic per count on that broker (reused on a second run), runs the modes
// interleaved, and prints the medians by partition count with each run's
// goroutines, connections to the broker and the time from the last read to
// the last commit. The broker here is kfake in the test process: another
// process from the children's point of view.
func TestParentKafkaPartitionCounts(t *testing.T) {
	t.Setenv(asCommand, "1")
	k, err := kafkatest.Start("unused", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	cfg := testConfig(4_000, 2)
	cfg.Counts, cfg.Modes, cfg.Kafka, cfg.Readers = []int{2, 6}, []string{"beam"}, strings.Join(k.Brokers(), ","), 4
	cfg.CommitInterval = time.Second
	cfg.Results = filepath.Join(t.TempDir(), "results.json")
	rs, out := runParent(t, cfg, 3*time.Minute)
	var got []int
	for _, r := range rs {
		got = append(got, r.Partitions)
		if r.Bronze+r.DLQ != 4_000 {
			t.Errorf("%d partitions: %d+%d rows, want 4000", r.Partitions, r.Bronze, r.DLQ)
		}
		// The connections are sampled every 100 ms: a run this short
		// may hold them between two samples (TestConnections counts them).
		if r.PeakGoroutines == 0 || r.LastRead == 0 || r.LastCommit < r.LastRead {
			t.Errorf("%d partitions: %d goroutines, last read %d, last commit %d: want all > 0, the commit after the read",
				r.Partitions, r.PeakGoroutines, r.LastRead, r.LastCommit)
		}
	}
	if diff := cmp.Diff([]int{2, 6}, got); diff != "" {
		t.Errorf("partition counts of the runs (-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`(?m)^beam +6 +4 +1 .* \d+\.\d\d$`).MatchString(out.String()) {
		t.Errorf("no median line for 6 partitions, 4 readers, 1 run:\n%s", out.String())
	}
	if b, err := os.ReadFile(cfg.Results); err != nil || !bytes.Contains(b, []byte(`"PeakConns"`)) {
		t.Errorf("results file: %v, %.200s", err, b)
	}
	// A second parent reuses the topics: no second preload.
	if _, _, err := ensureTopic(context.Background(), cfg, 6); err != nil {
		t.Errorf("ensureTopic again: %v", err)
	}
}

// With --keys the events are keyed and bronze runs with --upsert: the
// check wants one row per key and every offset committed, so a run that
// kept two rows of a key, or lost one, fails.
func TestParentKeysUpsert(t *testing.T) {
	t.Setenv(asCommand, "1")
	k, err := kafkatest.Start("unused", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	cfg := testConfig(3_000, 3)
	cfg.Modes, cfg.Kafka, cfg.BadRatio, cfg.Keys = []string{"beam"}, strings.Join(k.Brokers(), ","), 0, 700
	cfg.CommitInterval = time.Second
	rs, out := runParent(t, cfg, 3*time.Minute)
	if len(rs) != 1 || rs[0].Bronze != 700 || rs[0].DLQ != 0 || rs[0].Keys != 700 {
		t.Fatalf("results %+v: want one beam run with 700 rows, one per key", rs)
	}
	if !strings.Contains(out.String(), "3000 events over 700 keys, upserted") {
		t.Errorf("no keyed header:\n%s", out.String())
	}
}

// connections counts this process's established connections to a port.
func TestConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for i := range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := connections(map[int]bool{port: true}); got != i+1 {
			t.Errorf("%d connections counted, want %d", got, i+1)
		}
	}
	if got := connections(map[int]bool{port + 1: true}); got != 0 {
		t.Errorf("%d connections to another port, want 0", got)
	}
}
