package main

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const topic = "fintech.debt.raw"

func startKafka(t *testing.T, partitions int) []string {
	t.Helper()
	k, err := kafkatest.Start(topic, partitions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k.Brokers()
}

func noEnv(string) string { return "" }

// runProduce runs the command and returns its exit code, stdout and stderr.
func runProduce(t *testing.T, stop <-chan struct{}, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(stop, args, noEnv, &out, &errb)
	return code, out.String(), errb.String()
}

var reportLine = regexp.MustCompile(`^produce: sent (\d+) events \((\d+) malformed, (\d+) bytes\) in (\S+): (\d+) events/s to (\S+)\n$`)

type report struct {
	sent, malformed, bytes int64
	elapsed                time.Duration
}

func parseReport(t *testing.T, stdout string) report {
	t.Helper()
	m := reportLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("stdout is not one report line: %q", stdout)
	}
	var r report
	r.sent, _ = strconv.ParseInt(m[1], 10, 64)
	r.malformed, _ = strconv.ParseInt(m[2], 10, 64)
	r.bytes, _ = strconv.ParseInt(m[3], 10, 64)
	r.elapsed, _ = time.ParseDuration(m[4])
	return r
}

// consume reads every record of the topic, waiting until there are want.
func consume(t *testing.T, brokers []string, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records of %d", len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// isMalformed reports whether v is one of event.MalformedCorpus.
func isMalformed(v []byte) bool {
	for _, m := range event.MalformedCorpus {
		if bytes.Equal(v, m) {
			return true
		}
	}
	return false
}

// Every event is sent and acknowledged once, valid ones parse, their
// event times are close to now, and the report and metrics agree.
func TestProduceCount(t *testing.T) {
	brokers := startKafka(t, 3)
	before := testutil.ToFloat64(producedRecords.WithLabelValues(topic, "valid"))
	started := time.Now()
	code, stdout, stderr := runProduce(t, nil, "--brokers="+kafkatest.Addr(brokers), "--count=500", "--seed=7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, stdout)
	if r.sent != 500 || r.malformed != 0 {
		t.Fatalf("report %+v, want 500 sent, 0 malformed", r)
	}
	recs := consume(t, brokers, topic, 500)
	var total int64
	parts := map[int32]int{}
	for _, rec := range recs {
		total += int64(len(rec.Value))
		parts[rec.Partition]++
		f, err := event.Parse(rec.Value)
		if err != nil {
			t.Fatalf("event %q does not parse: %v", rec.Value, err)
		}
		at := time.UnixMicro(f.Timestamp)
		if at.Before(started.Add(-3*time.Second)) || at.After(time.Now().Add(time.Second)) {
			t.Errorf("event time %v is not about now (%v)", at, started)
		}
	}
	if len(recs) != 500 {
		t.Errorf("topic holds %d records, want 500", len(recs))
	}
	if total != r.bytes {
		t.Errorf("report says %d bytes, the topic holds %d", r.bytes, total)
	}
	if got := testutil.ToFloat64(producedRecords.WithLabelValues(topic, "valid")) - before; got != 500 {
		t.Errorf("haade_produced_records_total{kind=valid} rose by %v, want 500", got)
	}
}

// About --bad-ratio of the events are malformed values of the corpus, and
// the report counts exactly those.
func TestProduceBadRatio(t *testing.T) {
	brokers := startKafka(t, 2)
	const n, ratio = 2000, 0.2
	code, stdout, stderr := runProduce(t, nil, "--brokers="+kafkatest.Addr(brokers), "--count=2000", "--bad-ratio=0.2", "--seed=3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, stdout)
	var bad int64
	for _, rec := range consume(t, brokers, topic, n) {
		if isMalformed(rec.Value) {
			bad++
			if _, err := event.Parse(rec.Value); err == nil {
				t.Errorf("malformed value %q parses", rec.Value)
			}
		} else if _, err := event.Parse(rec.Value); err != nil {
			t.Errorf("valid value %q does not parse: %v", rec.Value, err)
		}
	}
	if bad != r.malformed {
		t.Errorf("report says %d malformed, the topic holds %d", r.malformed, bad)
	}
	// Binomial: 4 standard deviations either side.
	sd := math.Sqrt(n * ratio * (1 - ratio))
	if math.Abs(float64(bad)-n*ratio) > 4*sd {
		t.Errorf("%d malformed of %d, want about %v", bad, n, n*ratio)
	}
}

// --rate paces the run: 60 events at 200/s take about 0.3s, not less.
func TestProduceRate(t *testing.T) {
	brokers := startKafka(t, 1)
	code, stdout, stderr := runProduce(t, nil, "--brokers="+kafkatest.Addr(brokers), "--count=60", "--rate=200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, stdout)
	if r.sent != 60 {
		t.Fatalf("sent %d, want 60", r.sent)
	}
	// The last event is due 59/200 s after the first; a loaded machine
	// may be slower, never faster.
	if r.elapsed < 280*time.Millisecond || r.elapsed > 10*time.Second {
		t.Errorf("60 events at 200/s took %v, want about 0.3s", r.elapsed)
	}
}

// --count=0 sends until stopped, then flushes and reports.
func TestProduceUntilStopped(t *testing.T) {
	brokers := startKafka(t, 2)
	stop := make(chan struct{})
	time.AfterFunc(500*time.Millisecond, func() { close(stop) })
	code, stdout, stderr := runProduce(t, stop, "--brokers="+kafkatest.Addr(brokers), "--rate=100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseReport(t, stdout)
	if r.sent < 10 || r.sent > 200 {
		t.Fatalf("sent %d in about 0.5s at 100/s", r.sent)
	}
	if got := consume(t, brokers, topic, int(r.sent)); len(got) != int(r.sent) {
		t.Fatalf("topic holds %d records, report says %d", len(got), r.sent)
	}
}

// --partitions-create makes a missing topic with that many partitions.
func TestProduceCreatesTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	code, stdout, stderr := runProduce(t, nil, "--brokers="+kafkatest.Addr(brokers), "--topic=new.topic", "--partitions-create=3", "--count=30")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := parseReport(t, stdout); r.sent != 30 {
		t.Fatalf("sent %d, want 30", r.sent)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(context.Background(), "new.topic")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["new.topic"].Partitions); n != 3 {
		t.Fatalf("new.topic has %d partitions, want 3", n)
	}
	if got := consume(t, brokers, "new.topic", 30); len(got) != 30 {
		t.Fatalf("new.topic holds %d records, want 30", len(got))
	}
}

// A bad flag, or brokers that do not answer, is one error line naming the
// flag, and exit code 2.
func TestProduceBadFlags(t *testing.T) {
	brokers := startKafka(t, 1)
	ok := "--brokers=" + kafkatest.Addr(brokers)
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"no brokers", []string{"--count=1"}, "--brokers"},
		{"unreachable brokers", []string{"--brokers=127.0.0.1:1", "--connect-timeout=1s", "--count=1"}, "--brokers=127.0.0.1:1"},
		{"broker not host:port", []string{"--brokers=localhost"}, "--brokers"},
		{"negative rate", []string{ok, "--rate=-5"}, "--rate"},
		{"negative count", []string{ok, "--count=-1"}, "--count"},
		{"bad ratio above 1", []string{ok, "--bad-ratio=1.5"}, "--bad-ratio"},
		{"bad ratio not a number", []string{ok, "--bad-ratio=lots"}, "-bad-ratio"},
		{"negative partitions", []string{ok, "--partitions-create=-2"}, "--partitions-create"},
		{"missing topic", []string{ok, "--topic=absent", "--count=1"}, "--topic=absent"},
		{"unknown flag", []string{ok, "--speed=3"}, "--speed"},
		{"bad log format", []string{ok, "--log-format=xml"}, "--log-format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := time.Now()
			code, stdout, stderr := runProduce(t, nil, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "produce: ") || !strings.Contains(last, tc.flag) {
				t.Fatalf("error line %q does not name %s", last, tc.flag)
			}
			if time.Since(started) > 15*time.Second {
				t.Errorf("took %v", time.Since(started))
			}
		})
	}
}

// The environment sets flags as HAADE_<FLAG>; the command line wins.
func TestProduceEnv(t *testing.T) {
	env := map[string]string{"HAADE_BROKERS": "k:9092", "HAADE_BAD_RATIO": "0.5", "HAADE_RATE": "10"}
	cfg, err := parseArgs([]string{"--rate=20"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Kafka.Brokers[0] != "k:9092" || cfg.BadRatio != 0.5 || cfg.Rate != 20 || cfg.Kafka.Topic != topic {
		t.Fatalf("config %+v", cfg)
	}
}
