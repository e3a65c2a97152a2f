package main

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"strings"

	"github.com/haade/haade/testing/chart"
)

// series is one run in a chart: its label and samples.
type series struct {
	label string
	rep   Report
}

// chartPanel is one figure over time.
type chartPanel struct {
	title string
	value func(Sample, Report) float64 // < 0: not read
	unit  string
}

var chartPanels = []chartPanel{
	{"latest completed checkpoint, state size", func(s Sample, _ Report) float64 { return mibOr(s.CheckpointBytes) }, "MiB"},
	{"job server heap after a full GC", func(s Sample, _ Report) float64 { return mibOr(s.HeapBytes) }, "MiB"},
	{"lag (produced - rows), in seconds of input", func(s Sample, r Report) float64 {
		if s.Lag < 0 || r.Rate <= 0 {
			return -1
		}
		return float64(s.Lag) / r.Rate
	}, "s"},
	{"age of the newest bronze snapshot", func(s Sample, _ Report) float64 { return s.FreshnessS }, "s"},
}

func mibOr(b int64) float64 {
	if b < 0 {
		return -1
	}
	return float64(b) / (1 << 20)
}

// drawSoakChart draws every panel with one line per series, over minutes.
func drawSoakChart(title string, ss []series) *image.RGBA {
	var panels []chart.Panel
	for _, p := range chartPanels {
		cp := chart.Panel{Title: p.title, Unit: p.unit, XUnit: "min"}
		for _, s := range ss {
			l := chart.Line{Label: s.label}
			for _, smp := range s.rep.Samples {
				v := p.value(smp, s.rep)
				if v < 0 {
					v = math.NaN()
				}
				l.Points = append(l.Points, chart.Point{X: smp.Elapsed / 60, Y: v})
			}
			cp.Lines = append(cp.Lines, l)
		}
		panels = append(panels, cp)
	}
	return chart.Lines(title, "", 1, panels)
}

// writeChart reads soak.json files given as LABEL=PATH and writes a PNG.
func writeChart(title, out string, inputs []string) error {
	var ss []series
	for _, in := range inputs {
		eq := strings.LastIndexByte(in, '=') // a label may hold "="; a path does not
		if eq < 0 {
			return fmt.Errorf("%q is not LABEL=PATH", in)
		}
		label, path := in[:eq], in[eq+1:]
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		ss = append(ss, series{label: label, rep: rep})
	}
	return chart.Save(out, drawSoakChart(title, ss))
}

// table is a Markdown table of one run, a row every `every` samples.
func table(rep Report, every int) string {
	var b strings.Builder
	b.WriteString("| minute | checkpoint state | heap after GC | rows | lag | newest snapshot age | checkpoints (failed) |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, s := range rep.Samples {
		if i%every != every-1 && i != len(rep.Samples)-1 {
			continue
		}
		lag := "n/a"
		if s.Lag >= 0 && rep.Rate > 0 {
			lag = fmt.Sprintf("%d (%.0f s)", s.Lag, float64(s.Lag)/rep.Rate)
		}
		fmt.Fprintf(&b, "| %.0f | %s | %s | %d | %s | %.0f s | %d (%d) |\n", s.Elapsed/60, mib(s.CheckpointBytes), mib(s.HeapBytes), s.Rows, lag, s.FreshnessS, s.Checkpoints, s.FailedCheckpoints)
	}
	// The fits over the later half of the samples, as the soak judges them.
	if n := len(rep.Samples); n >= 4 {
		var xs, cp, heap []float64
		for _, s := range rep.Samples {
			xs = append(xs, s.Elapsed/60)
			cp = append(cp, float64(s.CheckpointBytes))
			heap = append(heap, float64(s.HeapBytes))
		}
		from := xs[n-1] / 2
		if f, err := fitGrowth(xs, cp, from); err == nil {
			fmt.Fprintf(&b, "\nCheckpoint state from minute %.0f to %.0f: %+.1f KiB/min, %+.2f%% over the window (%d samples).\n", from, xs[n-1], f.SlopePerMin/1024, f.GrowthPct, f.Samples)
		}
		if f, err := fitGrowth(xs, heap, from); err == nil {
			fmt.Fprintf(&b, "Heap after GC from minute %.0f to %.0f: %+.2f MiB/min, %+.2f%% over the window (%d samples).\n", from, xs[n-1], f.SlopePerMin/(1<<20), f.GrowthPct, f.Samples)
		}
	}
	return b.String()
}
