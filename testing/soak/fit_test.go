package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestFitGrowthFlatAndLinear(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4, 5, 6}
	flat := []float64{900, 100, 101, 99, 100, 101, 99} // a warm-up spike, then flat
	f, err := fitGrowth(xs, flat, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Samples != 5 || math.Abs(f.GrowthPct) > 2 {
		t.Errorf("flat series: %+v, want 5 samples and |growth| < 2%%", f)
	}
	linear := []float64{1, 2, 3, 4, 5, 6, 7} // +1 per minute
	f, err = fitGrowth(xs, linear, 3)
	if err != nil {
		t.Fatal(err)
	}
	// window 3..6 min, mean 5.5, slope 1: 100 * 1 * 3 / 5.5
	if math.Abs(f.SlopePerMin-1) > 1e-9 || math.Abs(f.GrowthPct-100*3/5.5) > 1e-9 {
		t.Errorf("linear series: %+v, want slope 1/min and growth %.2f%%", f, 100*3/5.5)
	}
}

func TestFitGrowthSkipsUnreadAndNeedsTwo(t *testing.T) {
	xs := []float64{0, 1, 2, 3}
	f, err := fitGrowth(xs, []float64{5, 5, -1, 5}, 1)
	if err != nil || f.Samples != 2 {
		t.Errorf("fit with one unread sample = %+v, %v; want 2 samples", f, err)
	}
	if _, err := fitGrowth(xs, []float64{5, 5, -1, -1}, 1); err == nil {
		t.Error("fit over one sample: no error")
	}
}

func TestParseArgsRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runner=direct"}, "--runner"},
		{[]string{"--duration=1m"}, "--duration"},
		{[]string{"--interval=1s"}, "--interval"},
		{[]string{"--duration=10m", "--warmup=10m"}, "--warmup"},
		{[]string{"--rate=0"}, "--rate"},
		{[]string{"--partitions=0"}, "--partitions"},
		{[]string{"--flink-rest=127.0.0.1:8081"}, "--flink-rest"},
		{[]string{"--endpoint=127.0.0.1:8099"}, "--jvm-pid"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		_, err := parseArgs(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
	c, err := parseArgs([]string{"--duration=2h"})
	if err != nil || c.Warmup != time.Hour || c.Interval != time.Minute {
		t.Errorf("parseArgs(--duration=2h) = %+v, %v; want warm-up 1h, interval 1m", c, err)
	}
}

func TestEvaluateFailsOnGrowthAndStall(t *testing.T) {
	cfg, err := parseArgs([]string{"--duration=6m"})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(cp func(i int) int64, rows func(i int) int64) *Report {
		r := &Report{Rate: 2000}
		for i := 1; i <= 6; i++ {
			r.Samples = append(r.Samples, Sample{Elapsed: float64(60 * i), CheckpointBytes: cp(i), HeapBytes: 100 << 20,
				Rows: rows(i), FreshnessS: 5, JobState: "RUNNING"})
		}
		return r
	}
	flat := mk(func(int) int64 { return 300 << 10 }, func(i int) int64 { return int64(i) * 120000 })
	evaluate(cfg, flat)
	if len(flat.Failures) != 0 {
		t.Errorf("flat run: failures %q, want none", flat.Failures)
	}
	growing := mk(func(i int) int64 { return int64(i) * 500 << 10 }, func(i int) int64 { return int64(i) * 120000 })
	evaluate(cfg, growing)
	if len(growing.Failures) != 1 || !strings.Contains(growing.Failures[0], "checkpoint size grew") {
		t.Errorf("growing checkpoint: failures %q, want one about the checkpoint size", growing.Failures)
	}
	stalled := mk(func(int) int64 { return 300 << 10 }, func(int) int64 { return 5000 })
	evaluate(cfg, stalled)
	if len(stalled.Failures) != 1 || !strings.Contains(stalled.Failures[0], "no rows") {
		t.Errorf("stalled rows: failures %q, want one about rows", stalled.Failures)
	}
}

func TestTableAndChartFromAReport(t *testing.T) {
	rep := Report{Rate: 2000, Samples: []Sample{
		{Elapsed: 60, CheckpointBytes: 1 << 20, HeapBytes: 64 << 20, Rows: 100, Lag: 4000, FreshnessS: 3, Checkpoints: 6},
		{Elapsed: 120, CheckpointBytes: 1 << 20, HeapBytes: -1, Rows: 200, Lag: -1, FreshnessS: 4, Checkpoints: 12},
	}}
	got := table(rep, 1)
	for _, want := range []string{"| 1 | 1.00 MiB | 64.00 MiB | 100 | 4000 (2 s) | 3 s | 6 (0) |", "| 2 | 1.00 MiB | n/a | 200 | n/a | 4 s | 12 (0) |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	img := drawSoakChart("t", []series{{label: "a", rep: rep}})
	if img.Bounds().Dx() != 1000 {
		t.Errorf("chart width %d, want 1000", img.Bounds().Dx())
	}
}
