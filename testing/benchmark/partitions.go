package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/testing/stats"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// benchTopic is the topic of --kafka that holds --events events of seed
// on n partitions: the name says what it holds, so a later run reuses it.
func benchTopic(cfg Config, n int) string {
	name := fmt.Sprintf("haade.benchmark.p%d.e%d.s%d.b%g", n, cfg.Events, cfg.Seed, cfg.BadRatio)
	if cfg.Keys > 0 {
		name += fmt.Sprintf(".k%d", cfg.Keys)
	}
	return name
}

// ensureTopic returns the topic of n partitions on --kafka, made and
// preloaded if it does not exist, and how long the preload took. A topic
// of that name with other partitions or another record count is an error:
// a preload that failed halfway, say.
func ensureTopic(ctx context.Context, cfg Config, n int) (string, time.Duration, error) {
	name := benchTopic(cfg, n)
	addrs := strings.Split(cfg.Kafka, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return "", 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx) // all: a missing one by name is an error
	if err != nil {
		return "", 0, fmt.Errorf("--kafka=%s: %w", cfg.Kafka, err)
	}
	started := time.Now()
	if td, ok := topics[name]; !ok || td.Err != nil {
		resp, err := adm.CreateTopic(ctx, int32(n), 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return "", 0, fmt.Errorf("--kafka=%s: create %s: %w", cfg.Kafka, name, err)
		}
		if err := produceSample(ctx, addrs, name, cfg); err != nil {
			return "", 0, fmt.Errorf("preload %s: %w", name, err)
		}
	}
	took := time.Since(started)
	ends, err := adm.ListEndOffsets(ctx, name)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return "", 0, err
	}
	var total int64
	parts := 0
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset; parts++ })
	if parts != n || total != int64(cfg.Events) {
		return "", 0, fmt.Errorf("--kafka=%s: %s has %d partitions and %d records, want %d and %d; delete it to preload it again",
			cfg.Kafka, name, parts, total, n, cfg.Events)
	}
	return name, took, nil
}

// produceSample produces --events sample events to topic, about
// --bad-ratio of them malformed (kafkatest.Sample, with
// event.MalformedCorpus), round robin over the partitions, in chunks so
// that the generated values never all sit in memory.
func produceSample(ctx context.Context, addrs []string, topic string, cfg Config) error {
	for done, k := 0, uint64(0); done < cfg.Events; k++ {
		m := min(preloadChunk, cfg.Events-done)
		values := kafkatest.Sample(m, cfg.Seed+k, cfg.BadRatio, event.MalformedCorpus)
		var err error
		if cfg.Keys > 0 {
			err = kafkatest.ProduceKeyed(ctx, addrs, topic, kafkatest.SpreadKeys(done, m, cfg.Keys), values)
		} else {
			err = kafkatest.Produce(ctx, addrs, topic, values)
		}
		if err != nil {
			return err
		}
		done += m
	}
	return nil
}

// countsOf returns the partition counts of rs, in first-seen order.
func countsOf(rs []result) []int {
	var out []int
	for _, r := range rs {
		if !slices.Contains(out, r.Partitions) {
			out = append(out, r.Partitions)
		}
	}
	return out
}

// printByPartitions prints, for each mode and partition count, the
// medians of the runs, and the wall time's ratio to the first count's:
// start to exit of the process (the run's own span without
// --broker-process or --kafka), events/s, CPU per event, peak RSS, peak
// goroutines, broker connections and the time from the last read to the
// last commit, in seconds and in commit intervals.
func printByPartitions(out io.Writer, rs []result, interval time.Duration) {
	counts := countsOf(rs)
	var modes []string
	for _, r := range rs {
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	fmt.Fprintf(out, "medians of %s runs by partition count:\n", runsPer(rs))
	fmt.Fprintf(out, "%-5s %6s %7s %5s %10s %8s %12s %13s %10s %6s %14s %10s\n",
		"mode", "parts", "readers", "runs", "wall s", "events/s", "CPU µs/event", "peak RSS MiB", "goroutines", "conns", "read→commit s", "wall ratio")
	for _, mode := range modes {
		var base float64
		for _, n := range counts {
			var wall, cpu, rss, gor, conns, tail []float64
			var readers, events int
			for _, r := range rs {
				if r.Mode != mode || r.Partitions != n {
					continue
				}
				w, c := r.ProcessSeconds, r.ProcessCPUSeconds
				if w <= 0 {
					w, c = r.Seconds, r.CPUSeconds
				}
				wall, cpu = append(wall, w), append(cpu, c)
				rss = append(rss, float64(r.PeakRSS)/mib)
				gor, conns = append(gor, float64(r.PeakGoroutines)), append(conns, float64(r.PeakConns))
				if t := r.tail(); r.LastRead > 0 {
					tail = append(tail, t)
				}
				readers, events = r.Readers, r.Events
			}
			if len(wall) == 0 {
				continue
			}
			w := stats.Median(wall)
			if base == 0 {
				base = w
			}
			tailS := "-"
			if len(tail) > 0 {
				t := stats.Median(tail)
				tailS = fmt.Sprintf("%.2f (%.1f×)", t, t/interval.Seconds())
			}
			rd := "-"
			if readers > 0 {
				rd = fmt.Sprint(min(readers, n))
			}
			fmt.Fprintf(out, "%-5s %6d %7s %5d %10.2f %8.0f %12.2f %13.0f %10.0f %6.0f %14s %10.2f\n",
				mode, n, rd, len(wall), w, float64(events)/w, 1e6*stats.Median(cpu)/float64(events), stats.Median(rss),
				stats.Median(gor), stats.Median(conns), tailS, w/base)
		}
	}
}

// runsPer says how many runs each median is of.
func runsPer(rs []result) string {
	per := map[string]int{}
	for _, r := range rs {
		per[fmt.Sprint(r.Mode, r.Partitions)]++
	}
	var ns []int
	for _, n := range per {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	ns = slices.Compact(ns)
	if len(ns) == 1 {
		return fmt.Sprint(ns[0])
	}
	return strings.Trim(fmt.Sprint(ns), "[]")
}

// logPartitions returns the partitions of kc.Topic, each with the range a
// bounded first run reads: from its earliest offset to its end.
func logPartitions(ctx context.Context, kc kafkaio.Config) ([]kafkaio.Partition, error) {
	topic, err := kafkaio.Open(ctx, kc, kafkaio.DefaultTimeout)
	if err != nil {
		return nil, err
	}
	defer topic.Close()
	src, err := topic.Plan(ctx, kafkaio.PlanOpts{Bounded: true})
	if err != nil {
		return nil, err
	}
	return src.Partitions, nil
}
