// Command benchmark measures the bronze pipeline against a pure-Go loop that
// does the same work without Beam, on the same machine, in the same run.
//
// Each measurement runs in its own child process (the command re-executes
// itself with --mode=loop and --mode=beam), so that peak resident sets are
// not mixed. A child starts an in-process Kafka, preloads --events sample
// events, garbage-collects and records its resident set (mostly the
// broker's copy of the backlog), resets the kernel's peak-RSS mark, then
// runs, and checks that the tables hold exactly --events rows (bronze plus
// dead letters) so that a broken run cannot report a fast number.
//
// With --broker-process the parent instead starts one broker process,
// preloads it once, and passes its address and a fresh directory to each
// child (--brokers, --dir); it times each child from exec to exit and
// checks the child's tables after it exits.
//
// With --keys, every event has one of that many Kafka keys and the beam mode
// runs bronze with --upsert: the table must then hold one row per key.
//
//	go run ./testing/benchmark --events=1000000
//	go run ./testing/benchmark --events=5000000 --mode=beam --cpuprofile=beam.pprof
//	go run ./testing/benchmark --kafka=127.0.0.1:9092 --modes=beam --keys=100000 --bad-ratio=0
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/runners/obs"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/stats"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
	"github.com/prometheus/procfs"
)

// Config holds the command line.
type Config struct {
	Events         int
	Mode           string // all, loop or beam
	CommitInterval time.Duration
	Partitions     int
	BadRatio       float64
	Seed           uint64
	LoopGoroutines int
	LoopChunk      int
	FetchBytes     int
	CallDuration   time.Duration
	CPUProfile     string
	MemProfile     string
	Repeat         int
	Keep           bool
	BrokerProcess  bool
	RSSTrace       time.Duration
	Child          bool
	Brokers        string // a preloaded Kafka to read instead of starting one (the parent's, with --broker-process)
	Dir            string // with Brokers: the directory of catalog.db and the warehouse
	// Counts are the partition counts of --partitions, measured
	// interleaved in --mode=all; Partitions is the first.
	Counts []int
	// Modes are --modes: what --mode=all measures, in this order.
	Modes []string
	// Kafka is a real broker in another process (--kafka), with one
	// preloaded topic per partition count (ensureTopic).
	Kafka string
	// Topic is the topic a child reads (--topic, internal).
	Topic string
	// Readers is bronze's --kafka-readers of the beam mode.
	Readers int
	// Results, when set, is a file the parent writes every result to, as
	// JSON.
	Results string
	// Keys, when > 0, is how many Kafka keys the events have (--keys): the
	// beam mode then runs bronze with --upsert.
	Keys int
}

// topic is the topic of an in-process broker and of --broker-process.
const topic = "fintech.debt.raw"

// resultPrefix starts the line on which a child reports its result.
const resultPrefix = "BENCHMARK-RESULT "

// result is one measurement.
type result struct {
	Mode       string
	Events     int
	Partitions int     `json:",omitempty"`
	Readers    int     `json:",omitempty"` // beam: --kafka-readers
	Seconds    float64 // wall time of the run: tables, plan, read, write, commit
	CPUSeconds float64 // user + system of the whole process during the run
	PeakRSS    int64   // high-water mark of the resident set during the run
	PeakReset  bool    // false: PeakRSS includes the preload
	PreloadRSS int64   // resident set after the preload, garbage collected (with the broker's copy when in process)
	BrokerRSS  int64   // resident set of the broker process; 0 when the broker runs in this process
	Preload    float64 // seconds the preload took
	Bronze     int64   // rows in the bronze table
	DLQ        int64   // rows in the dead-letter table
	Files      int64   // data files of both tables
	Snapshots  int     // snapshots of both tables
	// ProcessSeconds is the wall time of the child process as its parent
	// sees it, from just before exec to wait returning: start-up, the run
	// and shutdown. Set by the parent with --broker-process only (0: not
	// measured; otherwise the process also started a broker and preloaded).
	ProcessSeconds float64 `json:"process_s,omitempty"`
	// ProcessCPUSeconds is the child's user + system time from its
	// ProcessState, under the same condition.
	ProcessCPUSeconds float64 `json:"process_cpu_s,omitempty"`
	// PeakGoroutines is the most goroutines the run had at once, sampled
	// every 100 ms, and PeakConns the most TCP connections it held to the
	// broker's port (with --brokers), sampled every second.
	PeakGoroutines int
	PeakConns      int
	// LastRead is when the run's Kafka read last counted records
	// (haade_kafka_records_read_total, sampled every 100 ms), and
	// LastCommit the timestamp of the newest snapshot of either table:
	// unix milliseconds, 0 when unknown. The loop reads no such metric.
	LastRead   int64 `json:",omitempty"`
	LastCommit int64 `json:",omitempty"`
	// Keys is --keys: the events' keys, and the rows the upsert table
	// must hold.
	Keys int `json:",omitempty"`
}

// tail is the time from the last read to the last commit, in seconds; -1
// when either is unknown.
func (r result) tail() float64 {
	if r.LastRead == 0 || r.LastCommit == 0 {
		return -1
	}
	return float64(r.LastCommit-r.LastRead) / 1e3
}

// The metrics of the stages the benchmark runs.
func init() {
	obs.MustRegister(kafkaio.Collectors()...)
	obs.MustRegister(parse.Collectors()...)
	obs.MustRegister(icebergio.Collectors()...)
}

func main() {
	var cfg Config
	flag.IntVar(&cfg.Events, "events", 1_000_000, "events to preload and ingest")
	flag.StringVar(&cfg.Mode, "mode", "all", "all (loop then beam, each in a child process), loop or beam (broker: internal)")
	flag.DurationVar(&cfg.CommitInterval, "commit-interval", 10*time.Second, "window length of the Beam pipeline: one snapshot per interval")
	counts := flag.String("partitions", "8", "partitions of the topic; in --mode=all a comma-separated list (such as 8,256,1024), measured interleaved")
	modes := flag.String("modes", "loop,beam", "in --mode=all: the modes measured, in order (loop, beam)")
	flag.StringVar(&cfg.Kafka, "kafka", "", "in --mode=all: a real Kafka broker in another process (host:port), holding one preloaded topic per --partitions count (made on first use, reused after); children read it into fresh tables, and their connections to it are counted")
	flag.StringVar(&cfg.Topic, "topic", topic, "internal: the topic a child reads")
	flag.IntVar(&cfg.Readers, "kafka-readers", kafkaio.DefaultReaders, "beam mode: bronze's --kafka-readers")
	flag.StringVar(&cfg.Results, "results", "", "in --mode=all: write every result to this file as JSON")
	flag.Float64Var(&cfg.BadRatio, "bad-ratio", 0.01, "share of malformed events")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the sample events")
	flag.IntVar(&cfg.LoopGoroutines, "loop-goroutines", 2, "consumer goroutines of the pure-Go loop, each with its share of the partitions")
	flag.IntVar(&cfg.LoopChunk, "loop-chunk", 256<<10, "rows per table.WriteRecords call of each loop goroutine")
	flag.IntVar(&cfg.FetchBytes, "fetch-max-partition-bytes", 0, "kafkaio.Config.FetchMaxPartitionBytes of both modes; 0 is kafkaio's default")
	flag.DurationVar(&cfg.CallDuration, "call-duration", 0, "kafkaio.Config.CallDuration of the Beam mode (how long one partition reads before it self-checkpoints); 0 is kafkaio's default")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file (in --mode=all: of the beam child)")
	flag.StringVar(&cfg.MemProfile, "memprofile", "", "write a heap profile at the run's peak live heap to this file (in --mode=all: of the beam child)")
	flag.IntVar(&cfg.Repeat, "repeat", 1, "in --mode=all: measure loop and beam this many times")
	flag.BoolVar(&cfg.BrokerProcess, "broker-process", false, "run Kafka in a process of its own, so that the measured process holds no copy of the backlog (default: in the same process); in --mode=all one broker, preloaded once, serves every child, and each child is also timed from exec to exit")
	flag.StringVar(&cfg.Brokers, "brokers", "", "in --mode=loop or beam, with --dir: read this preloaded Kafka (host:port[,host:port...]) instead of starting and preloading one, and leave the row-count check to the caller (--mode=all --broker-process passes it)")
	flag.StringVar(&cfg.Dir, "dir", "", "with --brokers: an existing directory without a catalog.db, for the run's catalog.db and warehouse; it is left in place")
	flag.DurationVar(&cfg.RSSTrace, "rss-trace", 0, "in --mode=loop or beam: print the resident set every this often during the run (0: off)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the temporary catalogs and warehouses")
	flag.BoolVar(&cfg.Child, "child", false, "internal: report the result as one line for the parent")
	flag.IntVar(&cfg.Keys, "keys", 0, "give each event one of this many Kafka keys (event i the key debtor-(i*7919 mod keys), in its key's partition) and run bronze with --upsert: the table keeps one row per key; beam mode only, with --bad-ratio=0")
	flag.Parse()
	beam.Init()
	var err error
	if cfg.Counts, err = parseCounts(*counts); err != nil {
		fmt.Fprintf(os.Stderr, "benchmark: %v\n", err)
		os.Exit(2)
	}
	cfg.Partitions = cfg.Counts[0]
	cfg.Modes = strings.Split(*modes, ",")
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "benchmark: %v\n", err)
		os.Exit(2)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := context.Background()
	if cfg.Mode == "broker" {
		if err := serveBroker(ctx, cfg); err != nil {
			fmt.Fprintf(os.Stderr, "benchmark: broker: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if cfg.Mode == "all" {
		if _, err := parent(ctx, cfg, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "benchmark: %v\n", err)
			os.Exit(1)
		}
		return
	}
	r, err := measure(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchmark: %s: %v\n", cfg.Mode, err)
		os.Exit(1)
	}
	if cfg.Child {
		b, _ := json.Marshal(r)
		fmt.Printf("%s%s\n", resultPrefix, b)
		return
	}
	printTable(os.Stdout, []result{r})
}

func (c Config) validate() error {
	switch {
	case c.Events <= 0:
		return fmt.Errorf("--events=%d: want > 0", c.Events)
	case c.Mode != "all" && c.Mode != "loop" && c.Mode != "beam" && c.Mode != "broker":
		return fmt.Errorf("--mode=%q: want all, loop or beam", c.Mode)
	case c.Partitions <= 0:
		return fmt.Errorf("--partitions=%d: want > 0", c.Partitions)
	case len(c.Counts) > 1 && c.Mode != "all":
		return fmt.Errorf("--partitions=%v: a list only in --mode=all", c.Counts)
	case len(c.Counts) > 1 && c.BrokerProcess:
		return fmt.Errorf("--partitions=%v: a list needs --kafka, not --broker-process", c.Counts)
	case c.Kafka != "" && (c.Mode != "all" || c.BrokerProcess):
		return fmt.Errorf("--kafka=%q: only with --mode=all, without --broker-process", c.Kafka)
	case c.Readers <= 0:
		return fmt.Errorf("--kafka-readers=%d: want > 0", c.Readers)
	case c.BadRatio < 0 || c.BadRatio > 1:
		return fmt.Errorf("--bad-ratio=%v: want 0..1", c.BadRatio)
	case c.LoopGoroutines <= 0 || c.LoopChunk <= 0:
		return errors.New("--loop-goroutines and --loop-chunk: want > 0")
	case c.Repeat <= 0:
		return fmt.Errorf("--repeat=%d: want > 0", c.Repeat)
	case c.CommitInterval < 100*time.Millisecond || (24*time.Hour)%c.CommitInterval != 0:
		return fmt.Errorf("--commit-interval=%v: want at least 100ms, dividing a day", c.CommitInterval)
	case c.Brokers != "" && c.Mode != "loop" && c.Mode != "beam":
		return fmt.Errorf("--brokers=%q: only with --mode=loop or beam, not --mode=%s", c.Brokers, c.Mode)
	case c.Brokers != "" && c.Dir == "":
		return fmt.Errorf("--dir: needed with --brokers=%q, the directory of the run's tables", c.Brokers)
	case c.Dir != "" && c.Brokers == "":
		return fmt.Errorf("--dir=%q: only with --brokers", c.Dir)
	case c.Keys < 0 || c.Keys > c.Events:
		return fmt.Errorf("--keys=%d: want 0 (no keys) up to --events=%d", c.Keys, c.Events)
	case c.Keys > 0 && c.Keys%7919 == 0:
		return fmt.Errorf("--keys=%d: not a multiple of 7919 (kafkatest.SpreadKeys spreads the events over the keys with it)", c.Keys)
	case c.Keys > 0 && c.BadRatio != 0:
		return fmt.Errorf("--keys=%d: needs --bad-ratio=0 (the check counts one row per key)", c.Keys)
	case c.Keys > 0 && (c.Mode == "loop" || c.Mode == "all" && slices.Contains(c.Modes, "loop")):
		return fmt.Errorf("--keys=%d: the beam mode only (the loop has no upsert)", c.Keys)
	}
	for _, m := range c.Modes {
		if m != "loop" && m != "beam" {
			return fmt.Errorf("--modes=%q: want loop and/or beam", strings.Join(c.Modes, ","))
		}
	}
	if c.Kafka != "" {
		if err := checkAddrs("--kafka", c.Kafka); err != nil {
			return err
		}
	}
	if c.Brokers != "" {
		if err := checkAddrs("--brokers", c.Brokers); err != nil {
			return err
		}
		switch st, err := os.Stat(c.Dir); {
		case err != nil:
			return fmt.Errorf("--dir=%q: %v", c.Dir, err)
		case !st.IsDir():
			return fmt.Errorf("--dir=%q: not a directory", c.Dir)
		}
		if _, err := os.Stat(filepath.Join(c.Dir, "catalog.db")); err == nil {
			return fmt.Errorf("--dir=%q: holds a catalog.db already; want fresh tables", c.Dir)
		}
	}
	return nil
}

// checkAddrs checks that addrs is host:port[,host:port...].
func checkAddrs(flagName, addrs string) error {
	for _, a := range strings.Split(addrs, ",") {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return fmt.Errorf("%s=%q: %q is not host:port", flagName, addrs, a)
		} else if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("%s=%q: %q: want a port 1..65535", flagName, addrs, a)
		}
	}
	return nil
}

// parseCounts parses --partitions: counts > 0, comma-separated.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--partitions=%q: want counts > 0, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// catalogIn is the SQLite catalog and warehouse of a run in dir.
func catalogIn(dir string) icebergio.CatalogConfig {
	return icebergio.CatalogConfig{Type: "sql", Name: "local", URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
}

// kafkaConfig is how both modes and the check read the topic.
func kafkaConfig(cfg Config, addrs []string) kafkaio.Config {
	return kafkaio.Config{Brokers: addrs, Topic: cfg.Topic, FetchMaxPartitionBytes: int32(cfg.FetchBytes), CallDuration: cfg.CallDuration}
}

// measure runs one mode in this process: broker and preload, then the run,
// then the row-count check. With --brokers it neither starts a broker nor
// preloads nor checks: it runs against that Kafka into --dir, and the
// caller checks.
func measure(ctx context.Context, cfg Config) (result, error) {
	given := cfg.Brokers != ""
	dir := cfg.Dir
	if !given {
		var err error
		if dir, err = os.MkdirTemp("", "haade-benchmark-"+cfg.Mode+"-"); err != nil {
			return result{}, err
		}
		if cfg.Keep {
			fmt.Fprintf(os.Stderr, "benchmark: %s: tables in %s\n", cfg.Mode, dir)
		} else {
			defer os.RemoveAll(dir)
		}
	}
	cc := catalogIn(dir)

	// With --brokers there is no preload: PreloadRSS is the resident set
	// before the run, runtime and binary.
	b := &broker{addrs: strings.Split(cfg.Brokers, ","), rss: rss(), close: func() {}}
	if !given {
		var err error
		if b, err = startBroker(ctx, cfg); err != nil {
			return result{}, err
		}
	}
	defer b.close()
	kc := kafkaConfig(cfg, b.addrs)
	r := result{Mode: cfg.Mode, Events: cfg.Events, Partitions: cfg.Partitions, PreloadRSS: b.rss, BrokerRSS: b.brokerRSS, Preload: b.took.Seconds(), Keys: cfg.Keys}
	if cfg.Mode == "beam" {
		r.Readers = cfg.Readers
	}

	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
	}
	if cfg.MemProfile != "" {
		stop := make(chan struct{})
		defer close(stop)
		go profileHeapPeaks(cfg.MemProfile, stop)
	}
	var trace []int64
	if cfg.RSSTrace > 0 {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(cfg.RSSTrace)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					trace = append(trace, rss())
				}
			}
		}()
		defer func() {
			close(stop)
			<-done
			fmt.Fprintf(os.Stderr, "benchmark: %s: RSS MiB every %v:", cfg.Mode, cfg.RSSTrace)
			for _, v := range trace {
				fmt.Fprintf(os.Stderr, " %d", v/mib)
			}
			fmt.Fprintln(os.Stderr)
		}()
	}
	// Without a preload the peak since the process started is the run's
	// own: there is nothing to reset.
	r.PeakReset = given || resetPeakRSS()
	peaks := startPeaks(brokerPorts(b.addrs, given))
	u0 := now()
	var err error
	switch cfg.Mode {
	case "loop":
		err = runLoop(ctx, kc, cc, cfg.LoopGoroutines, cfg.LoopChunk)
	case "beam":
		err = runBeam(ctx, kc, cc, cfg.CommitInterval, cfg.Readers, cfg.Keys > 0)
	}
	u1 := now()
	r.PeakGoroutines, r.PeakConns, r.LastRead = peaks.stop()
	if cfg.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	r.PeakRSS = peakRSS()
	if !r.PeakReset {
		r.PeakRSS = maxRSS()
	}
	r.Seconds = u1.wall.Sub(u0.wall).Seconds()
	r.CPUSeconds = (u1.cpu - u0.cpu).Seconds()
	if err != nil || given {
		return r, err
	}
	return r, check(ctx, &r, kc, cc)
}

// check counts the rows of both tables: they must add up to the events
// produced. For the Beam run, the offsets in the tables must also reach
// the end of every partition.
func check(ctx context.Context, r *result, kc kafkaio.Config, cc icebergio.CatalogConfig) error {
	cat, err := cc.Open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	}()
	pipeline := loopPipeline
	if r.Mode == "beam" {
		pipeline = beamPipeline
	}
	parts, err := logPartitions(ctx, kc)
	if err != nil {
		return err
	}
	var produced int64
	for _, p := range parts {
		produced += p.End - p.Start
	}
	for _, t := range []tables.Table{tables.Bronze, tables.DeadLetters} {
		st, err := icebergio.Stat(ctx, cat, t.Ident, pipeline)
		if err != nil {
			return err
		}
		if t.Ident == tables.Bronze.Ident {
			r.Bronze = st.Rows
		} else {
			r.DLQ = st.Rows
		}
		r.Files += st.DataFiles
		r.Snapshots += st.Snapshots
		if ms, err := lastSnapshot(ctx, cat, t.Ident); err != nil {
			return err
		} else if ms > r.LastCommit {
			r.LastCommit = ms
		}
		if r.Mode == "beam" {
			for _, p := range parts {
				if next, _ := st.Offsets.Next(kc.Topic, p.ID); next != p.End {
					return fmt.Errorf("%s: committed offset of partition %d is %d, want its end %d", t.Ident, p.ID, next, p.End)
				}
			}
		}
	}
	if r.Keys > 0 {
		// Every key has events, none malformed: one live row per key.
		if produced != int64(r.Events) || r.Bronze != int64(r.Keys) || r.DLQ != 0 {
			return fmt.Errorf("row count: %d bronze rows and %d dead letters of %d records produced (%d events asked), want one row per key, %d, and none", r.Bronze, r.DLQ, produced, r.Events, r.Keys)
		}
		return nil
	}
	if produced != int64(r.Events) || r.Bronze+r.DLQ != produced || r.Bronze == 0 {
		return fmt.Errorf("row count: %d bronze + %d dead letters = %d, want the %d records produced (%d events asked)", r.Bronze, r.DLQ, r.Bronze+r.DLQ, produced, r.Events)
	}
	return nil
}

// parent runs the modes in child processes, prints the table and returns
// the results: for each repeat, for each partition count, one per mode.
//
// With --broker-process it starts one broker process and preloads it once;
// with --kafka it uses that broker, with a topic per partition count
// (ensureTopic). Either way every child reads its topic from its earliest
// offsets into fresh tables in a directory the parent makes (--brokers,
// --dir). The parent times each child from exec to exit (ProcessSeconds,
// ProcessCPUSeconds) and checks its tables after it exits, outside that
// span.
func parent(ctx context.Context, cfg Config, out io.Writer) ([]result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logs, err := os.MkdirTemp("", "haade-benchmark-logs-")
	if err != nil {
		return nil, err
	}
	keyed := ""
	if cfg.Keys > 0 {
		keyed = fmt.Sprintf(" over %d keys, upserted", cfg.Keys)
	}
	fmt.Fprintf(out, "benchmark: %d events%s, partitions %v, modes %s, %.1f%% malformed, GOMAXPROCS=%d, %s; child logs in %s\n",
		cfg.Events, keyed, cfg.Counts, strings.Join(cfg.Modes, ","), 100*cfg.BadRatio, runtime.GOMAXPROCS(0), runtime.Version(), logs)
	var shared *broker
	topics := map[int]string{}
	for _, n := range cfg.Counts {
		topics[n] = topic
	}
	switch {
	case cfg.Kafka != "":
		shared = &broker{addrs: strings.Split(cfg.Kafka, ","), close: func() {}}
		for _, n := range cfg.Counts {
			fmt.Fprintf(out, "  topic of %d partitions on %s ...", n, cfg.Kafka)
			t, took, err := ensureTopic(ctx, cfg, n)
			if err != nil {
				fmt.Fprintln(out, " failed")
				return nil, err
			}
			topics[n] = t
			fmt.Fprintf(out, " %s (preloaded in %.1fs)\n", t, took.Seconds())
		}
	case cfg.BrokerProcess:
		fmt.Fprintf(out, "  broker process: load average %s ...", loadavg())
		if shared, err = startBrokerProcess(ctx, cfg); err != nil {
			fmt.Fprintln(out, " failed")
			return nil, err
		}
		defer shared.close()
		fmt.Fprintf(out, " preloaded in %.1fs, %.0f MiB, at %s\n", shared.took.Seconds(), float64(shared.brokerRSS)/mib, strings.Join(shared.addrs, ","))
	}
	var results []result
	for i := 0; i < cfg.Repeat; i++ {
		for _, n := range cfg.Counts {
			for _, mode := range cfg.Modes {
				c := cfg
				c.Partitions, c.Topic, c.Mode = n, topics[n], mode
				fmt.Fprintf(out, "  %s, %d partitions, run %d: load average %s ...", mode, n, i+1, loadavg())
				r, err := runChild(ctx, self, c, shared, filepath.Join(logs, fmt.Sprintf("%s-p%d-%d.log", mode, n, i+1)), i)
				if err != nil {
					fmt.Fprintln(out, " failed")
					return results, fmt.Errorf("%s, %d partitions, run %d: %w", mode, n, i+1, err)
				}
				if shared != nil {
					fmt.Fprintf(out, " %.1fs (process %.1fs)\n", r.Seconds, r.ProcessSeconds)
				} else {
					fmt.Fprintf(out, " %.1fs (preload %.1fs)\n", r.Seconds, r.Preload)
				}
				results = append(results, r)
			}
		}
	}
	fmt.Fprintln(out)
	printTable(out, results)
	if len(cfg.Counts) > 1 {
		fmt.Fprintln(out)
		printByPartitions(out, results, cfg.CommitInterval)
	}
	if cfg.Results != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(cfg.Results, append(b, '\n'), 0o644); err != nil {
			return results, err
		}
	}
	return results, nil
}

// runChild measures cfg.Mode on cfg.Topic of cfg.Partitions partitions
// in a child process, and checks its tables when the broker is shared.
func runChild(ctx context.Context, self string, cfg Config, shared *broker, logPath string, run int) (result, error) {
	args := []string{"--child", "--mode=" + cfg.Mode, fmt.Sprintf("--events=%d", cfg.Events),
		fmt.Sprintf("--partitions=%d", cfg.Partitions), "--topic=" + cfg.Topic, fmt.Sprintf("--bad-ratio=%g", cfg.BadRatio),
		fmt.Sprintf("--seed=%d", cfg.Seed), "--commit-interval=" + cfg.CommitInterval.String(),
		fmt.Sprintf("--loop-goroutines=%d", cfg.LoopGoroutines), fmt.Sprintf("--loop-chunk=%d", cfg.LoopChunk),
		fmt.Sprintf("--fetch-max-partition-bytes=%d", cfg.FetchBytes), "--call-duration=" + cfg.CallDuration.String(),
		fmt.Sprintf("--kafka-readers=%d", cfg.Readers), fmt.Sprintf("--keys=%d", cfg.Keys)}
	if cfg.Keep && shared == nil {
		args = append(args, "--keep")
	}
	var dir string
	if shared != nil {
		var err error
		if dir, err = os.MkdirTemp("", "haade-benchmark-"+cfg.Mode+"-"); err != nil {
			return result{}, err
		}
		args = append(args, "--brokers="+strings.Join(shared.addrs, ","), "--dir="+dir)
	}
	if cfg.Mode == "beam" && cfg.CPUProfile != "" {
		prof := cfg.CPUProfile
		if cfg.Repeat > 1 || len(cfg.Counts) > 1 {
			prof = fmt.Sprintf("%s.p%d.%d", prof, cfg.Partitions, run+1)
		}
		args = append(args, "--cpuprofile="+prof)
	}
	if cfg.Mode == "beam" && cfg.MemProfile != "" {
		args = append(args, "--memprofile="+cfg.MemProfile)
	}
	r, err := child(ctx, self, args, logPath)
	if shared == nil {
		// The process also started a broker and preloaded.
		r.ProcessSeconds, r.ProcessCPUSeconds = 0, 0
		return r, err
	}
	r.BrokerRSS, r.Preload = shared.brokerRSS, shared.took.Seconds()
	if err == nil {
		err = check(ctx, &r, kafkaConfig(cfg, shared.addrs), catalogIn(dir))
	}
	if cfg.Keep {
		fmt.Fprintf(os.Stderr, "benchmark: tables in %s\n", dir)
	} else {
		os.RemoveAll(dir)
	}
	return r, err
}

// child runs the benchmark binary with args and returns the result it
// reports, with ProcessSeconds and ProcessCPUSeconds: the wall time from
// just before the process starts to Wait returning, and its user + system
// time. Its stderr goes to logPath.
func child(ctx context.Context, self string, args []string, logPath string) (result, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return result{}, err
	}
	defer logf.Close()
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stdout, cmd.Stderr = &stdout, logf
	started := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		runErr = cmd.Wait()
	}
	took := time.Since(started)
	var r result
	found := false
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			found = json.Unmarshal([]byte(line), &r) == nil
		}
	}
	if runErr != nil || !found {
		return r, fmt.Errorf("%s %s: %v (no result); the end of its log %s:\n%s", filepath.Base(self), strings.Join(args, " "), runErr, logPath, cmdtest.TailFile(logPath, 20))
	}
	r.ProcessSeconds = took.Seconds()
	if ps := cmd.ProcessState; ps != nil {
		r.ProcessCPUSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	return r, nil
}

// loadavg is /proc/loadavg's three load averages as the kernel prints them
// (two decimals), read with procfs; "?" when it cannot be read.
func loadavg() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "?"
	}
	l, err := fs.LoadAvg()
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l.Load1, l.Load5, l.Load15)
}

const mib = 1 << 20

// printTable prints one line per result and, for each loop and beam pair,
// the ratio of their rates; then the ratios of all pairs on one line per
// timing, with their median (ratioLines).
func printTable(out io.Writer, rs []result) {
	fmt.Fprintf(out, "%-5s %5s %9s %8s %10s %7s %13s %9s %18s %13s %13s %18s %13s %11s %6s %5s %9s %10s %5s %13s\n",
		"mode", "parts", "events", "seconds", "events/s", "CPU s", "CPU µs/event", "process s", "events/s (process)", "process CPU s",
		"peak RSS MiB", "RSS after preload", "peak-preload", "broker MiB", "files", "snaps", "DLQ rows",
		"goroutines", "conns", "read→commit s")
	for _, r := range rs {
		peak := fmt.Sprintf("%.0f", float64(r.PeakRSS)/mib)
		if !r.PeakReset {
			peak += "*"
		}
		brk := "in process"
		if r.PeakConns > 0 {
			brk = "elsewhere"
		}
		if r.BrokerRSS > 0 {
			brk = fmt.Sprintf("%.0f", float64(r.BrokerRSS)/mib)
		}
		procS, procRate, procCPU := "-", "-", "-"
		if r.ProcessSeconds > 0 {
			procS = fmt.Sprintf("%.2f", r.ProcessSeconds)
			procRate = fmt.Sprintf("%.0f", float64(r.Events)/r.ProcessSeconds)
			procCPU = fmt.Sprintf("%.2f", r.ProcessCPUSeconds)
		}
		tail := "-"
		if t := r.tail(); t >= 0 || r.LastRead > 0 {
			tail = fmt.Sprintf("%.2f", t)
		}
		fmt.Fprintf(out, "%-5s %5d %9d %8.2f %10.0f %7.2f %13.2f %9s %18s %13s %13s %18.0f %13.0f %11s %6d %5d %9d %10d %5d %13s\n",
			r.Mode, r.Partitions, r.Events, r.Seconds, float64(r.Events)/r.Seconds, r.CPUSeconds, 1e6*r.CPUSeconds/float64(r.Events),
			procS, procRate, procCPU,
			peak, float64(r.PreloadRSS)/mib, float64(r.PeakRSS-r.PreloadRSS)/mib, brk, r.Files, r.Snapshots, r.DLQ,
			r.PeakGoroutines, r.PeakConns, tail)
	}
	for _, p := range pairs(rs) {
		l, b := p[0], p[1]
		fmt.Fprintf(out, "Beam/loop: rate %.0f%% (target >= 50%%), CPU per event %.2fx\n",
			100*l.Seconds/b.Seconds, b.CPUSeconds/l.CPUSeconds)
	}
	if len(countsOf(rs)) == 1 {
		ratioLines(out, rs) // with several counts, printByPartitions
	}
	for _, r := range rs {
		if !r.PeakReset {
			fmt.Fprintln(out, "* the kernel did not let the peak be reset after the preload: the peak includes it")
			break
		}
	}
}

// pairs are the loop and beam results of each repeat, in order.
func pairs(rs []result) [][2]result {
	var ps [][2]result
	for i := 0; i+1 < len(rs); i += 2 {
		if rs[i].Mode == "loop" && rs[i+1].Mode == "beam" {
			ps = append(ps, [2]result{rs[i], rs[i+1]})
		}
	}
	return ps
}

// ratioLines prints, for each timing, the beam/loop ratio of events/s of
// every pair and their median: from process start to exit when every
// result has it (ProcessSeconds), and from the run's start to its last
// commit.
func ratioLines(out io.Writer, rs []result) {
	ps := pairs(rs)
	if len(ps) == 0 {
		return
	}
	line := func(what string, secs func(result) float64) {
		var rs []float64
		for _, p := range ps {
			l, b := secs(p[0]), secs(p[1])
			if l <= 0 || b <= 0 {
				return
			}
			rs = append(rs, l/b) // same events: the rate ratio is the inverse time ratio
		}
		strs := make([]string, len(rs))
		for i, r := range rs {
			strs[i] = fmt.Sprintf("%.2f", r)
		}
		fmt.Fprintf(out, "bronze / loop, %s: %s (median %.2f)\n", what, strings.Join(strs, ", "), stats.Median(rs))
	}
	line("process start to exit", func(r result) float64 { return r.ProcessSeconds })
	line("run start to last commit", func(r result) float64 { return r.Seconds })
}
