// Command soak runs bronze unbounded on Flink for a long time while a
// producer writes at a steady rate, and records every --interval the size of
// Flink's latest completed checkpoint, the job server's heap after a full GC,
// the rows in bronze, the lag behind the topic and the age of the newest
// snapshot. It writes them to soak.csv and soak.json under --out and exits 1
// when, after --warmup, the checkpoint size or the heap grows (a least-squares
// line over the samples) by more than --max-checkpoint-growth or
// --max-heap-growth percent, or when bronze stops keeping up.
//
//	go run ./testing/soak --runner=flink --duration=2h
//	go run ./testing/soak --runner=flink --duration=5m --interval=20s   (.ci/soak)
//
// Two helpers draw the figures of finished runs (soak.json files):
//
//	go run ./testing/soak chart OUT.png LABEL=soak.json...   a PNG, one line per run
//	go run ./testing/soak table soak.json [EVERY]             a Markdown table, every EVERY-th sample
//
// By default it starts Kafka and Beam's Flink job server with its embedded
// Flink (testing/services, in $HAADE_RUN), restarting the job server so that
// its heap starts clean. With --endpoint it submits to a job server that is
// already running (for example one with --flink-master set to a standalone
// cluster); then --flink-rest names that cluster's REST API and --jvm-pid the
// JVM whose heap to watch (0: none).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config is the command line.
type Config struct {
	Runner              string
	Duration            time.Duration
	Interval            time.Duration
	Warmup              time.Duration
	Rate                float64
	Partitions          int
	Endpoint            string
	FlinkREST           string
	JVMPID              int
	Out                 string
	MaxCheckpointGrowth float64
	MaxHeapGrowth       float64
	MaxFreshness        time.Duration
	CommitInterval      time.Duration
	Keep                bool
}

func parseArgs(args []string) (Config, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var c Config
	fs.StringVar(&c.Runner, "runner", "flink", "runner; only flink")
	fs.DurationVar(&c.Duration, "duration", 5*time.Minute, "how long to produce and measure")
	fs.DurationVar(&c.Interval, "interval", time.Minute, "time between samples")
	fs.DurationVar(&c.Warmup, "warmup", 0, "samples before this are not fitted; 0 is half of --duration")
	fs.Float64Var(&c.Rate, "rate", 2000, "events per second the producer writes")
	fs.IntVar(&c.Partitions, "partitions", 4, "partitions of the soak topic")
	fs.StringVar(&c.Endpoint, "endpoint", "", "job server HOST:PORT; empty starts the embedded one with testing/services/flink.sh")
	fs.StringVar(&c.FlinkREST, "flink-rest", "", "Flink REST API URL, e.g. http://127.0.0.1:8081; empty finds the embedded cluster's in FLINK_REST_PORTS (8081-8089)")
	fs.IntVar(&c.JVMPID, "jvm-pid", -1, "JVM whose heap to record; -1 is the embedded job server, 0 records none")
	fs.StringVar(&c.Out, "out", "", "directory of soak.csv, soak.json and the catalog; empty is $HAADE_RUN/soak-<time>")
	fs.Float64Var(&c.MaxCheckpointGrowth, "max-checkpoint-growth", 5, "fail when the checkpoint size grows by more than this percent after warm-up")
	fs.Float64Var(&c.MaxHeapGrowth, "max-heap-growth", 10, "fail when the heap after GC grows by more than this percent after warm-up")
	fs.DurationVar(&c.MaxFreshness, "max-freshness", 2*time.Minute, "fail when the newest bronze snapshot is older than this at a sample after warm-up")
	fs.DurationVar(&c.CommitInterval, "commit-interval", 10*time.Second, "bronze's --commit-interval")
	fs.BoolVar(&c.Keep, "keep", false, "leave the Flink job running at the end")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.Runner != "flink":
		return c, fmt.Errorf("--runner=%q: only flink is soaked (Prism holds no checkpoint)", c.Runner)
	case c.Duration < 2*time.Minute:
		return c, fmt.Errorf("--duration=%s: at least 2m", c.Duration)
	case c.Interval < 5*time.Second || c.Interval > c.Duration/2:
		return c, fmt.Errorf("--interval=%s: between 5s and half of --duration", c.Interval)
	case c.Warmup < 0 || c.Warmup >= c.Duration:
		return c, fmt.Errorf("--warmup=%s: between 0 and --duration", c.Warmup)
	case c.Rate <= 0:
		return c, fmt.Errorf("--rate=%g: must be positive", c.Rate)
	case c.Partitions < 1:
		return c, fmt.Errorf("--partitions=%d: at least 1", c.Partitions)
	case c.MaxCheckpointGrowth <= 0 || c.MaxHeapGrowth <= 0:
		return c, errors.New("--max-checkpoint-growth and --max-heap-growth: must be positive")
	case c.FlinkREST != "" && !strings.HasPrefix(c.FlinkREST, "http://") && !strings.HasPrefix(c.FlinkREST, "https://"):
		return c, fmt.Errorf("--flink-rest=%q: want an http:// or https:// URL", c.FlinkREST)
	case c.Endpoint != "" && c.JVMPID == -1:
		return c, errors.New("--jvm-pid: set it (or 0) with --endpoint; the embedded job server's pid is only known when soak starts it")
	}
	if c.Warmup == 0 {
		c.Warmup = c.Duration / 2
	}
	return c, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s soak] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "chart" || os.Args[1] == "table") {
		if err := figures(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
		return
	}
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if len(rep.Failures) > 0 {
		for _, f := range rep.Failures {
			fmt.Fprintln(os.Stderr, "soak: FAIL:", f)
		}
		os.Exit(1)
	}
	if rep.Interrupted {
		logf("interrupted before --duration: judged from minute %s on", rep.Warmup)
	}
	logf("PASS: checkpoint %+.2f%%, heap %+.2f%% after warm-up", rep.Checkpoint.GrowthPct, rep.Heap.GrowthPct)
}

func figures(cmd string, args []string) error {
	switch cmd {
	case "chart":
		if len(args) < 2 {
			return errors.New("usage: soak chart OUT.png LABEL=soak.json...")
		}
		return writeChart("bronze on Beam 2.62's Flink job server (embedded Flink 1.19), 2,000 events/s, 4 partitions", args[0], args[1:])
	default:
		if len(args) < 1 || len(args) > 2 {
			return errors.New("usage: soak table soak.json [EVERY]")
		}
		every := 1
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return fmt.Errorf("EVERY=%q: want a positive number", args[1])
			}
			every = n
		}
		b, err := os.ReadFile(args[0])
		if err != nil {
			return err
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		fmt.Print(table(rep, every))
		return nil
	}
}
