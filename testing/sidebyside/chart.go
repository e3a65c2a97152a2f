package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"

	"github.com/haade/haade/testing/chart"
	"github.com/haade/haade/testing/stats"
)

// summary is one contender's figures over its runs: the median of each.
type summary struct {
	name                      string
	runs                      int
	eventsPerS, visibleS      float64
	firstVisibleS, cpuS       float64
	peakRSSMiB, servicesCPUS  float64
	snapshots                 float64
	cpuPerEventMicros, factor float64
	cpuPerWall, coresMedian   float64
}

// contenderOrder is the order of the table and of the chart's bars.
var contenderOrder = []string{"bronze", "flink", "native", "spark", "connect"}

// labels name the contenders in the table and the chart.
var labels = map[string]string{
	"bronze":  "HAADE bronze (Beam Go, Prism)",
	"spark":   "Spark 3.5 Structured Streaming",
	"connect": "Kafka Connect + Iceberg sink",
	"flink":   "HAADE bronze (Beam Go, Flink)",
	"native":  "Flink SQL + Iceberg's Flink sink",
}

// summarize groups the results by contender, in contenderOrder, and
// reports each one's throughput relative to Spark's (factor), when Spark
// ran.
func summarize(rep Report) []summary {
	by := map[string][]Result{}
	for _, r := range rep.Results {
		by[r.Contender] = append(by[r.Contender], r)
	}
	var out []summary
	for _, name := range contenderOrder {
		rs := by[name]
		if len(rs) == 0 {
			continue
		}
		col := func(f func(Result) float64) float64 {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, f(r))
			}
			return stats.Median(xs)
		}
		s := summary{
			name:          name,
			runs:          len(rs),
			eventsPerS:    col(func(r Result) float64 { return r.EventsPerSecond }),
			visibleS:      col(func(r Result) float64 { return r.VisibleSeconds }),
			firstVisibleS: col(func(r Result) float64 { return r.FirstVisibleSeconds }),
			cpuS:          col(func(r Result) float64 { return r.CPUSeconds }),
			cpuPerWall:    col(func(r Result) float64 { return r.CPUSeconds / r.VisibleSeconds }),
			coresMedian:   col(func(r Result) float64 { return r.CoresMedian }),
			peakRSSMiB:    col(func(r Result) float64 { return float64(r.PeakRSSBytes) / (1 << 20) }),
			servicesCPUS:  col(func(r Result) float64 { return r.ServicesCPUSeconds }),
			snapshots:     col(func(r Result) float64 { return float64(r.Snapshots) }),
		}
		s.cpuPerEventMicros = s.cpuS / float64(rep.Events) * 1e6
		out = append(out, s)
	}
	for _, s := range out {
		if s.name != "spark" {
			continue
		}
		for i := range out {
			out[i].factor = out[i].eventsPerS / s.eventsPerS
		}
	}
	return out
}

// markdown is the table of docs/benchmarks.
func markdown(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events, %d partitions, commit interval (Spark: trigger) %s; %s; %s\n\n",
		rep.Events, rep.Partitions, rep.CommitInterval, rep.Machine, rep.Date)
	b.WriteString("| contender | runs | events/s | × Spark | all rows visible | first rows visible | CPU s | CPU µs/event | CPU s / wall s | cores, median second | peak RSS | Kafka+MinIO+PostgreSQL CPU s | snapshots |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range summarize(rep) {
		factor := "–"
		if s.factor > 0 {
			factor = fmt.Sprintf("%.1f×", s.factor)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.1f s | %.1f s | %.1f | %.2f | %.2f | %.2f | %.0f MiB | %.1f | %.0f |\n",
			labels[s.name], s.runs, thousands(s.eventsPerS), factor, s.visibleS, s.firstVisibleS,
			s.cpuS, s.cpuPerEventMicros, s.cpuPerWall, s.coresMedian, s.peakRSSMiB, s.servicesCPUS, s.snapshots)
	}
	return b.String()
}

// thousands formats n with thin separators: 1,234,567.
func thousands(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// The chart: four panels (events/s, seconds until every row is visible, CPU
// seconds, peak RSS), one horizontal bar per contender in each.
const (
	chartW   = 1200
	margin   = 24
	headerH  = 56 // title and subtitle
	panelTop = 32 // a panel's title, above its first bar
	labelW   = 250
	panelGap = 20
	barH     = 26
	barGap   = 10
)

var (
	colorOf = map[string]color.RGBA{
		"bronze":  {12, 166, 120, 255}, // green
		"spark":   {230, 119, 0, 255},  // orange
		"connect": {66, 99, 235, 255},  // blue
		"flink":   {174, 62, 201, 255}, // purple
		"native":  {224, 49, 49, 255},  // red
	}
)

type panel struct {
	title string
	value func(summary) float64
	unit  func(float64) string
	// better says which way is good, for the title.
	better string
}

func drawChart(rep Report) *image.RGBA {
	ss := summarize(rep)
	panelH := panelTop + len(ss)*(barH+barGap) + barGap
	chartH := margin + headerH + 2*panelH + panelGap + margin
	img := image.NewRGBA(image.Rect(0, 0, chartW, chartH))
	draw.Draw(img, img.Bounds(), &image.Uniform{chart.White}, image.Point{}, draw.Src)
	chart.Text(img, margin, margin+12, chart.Ink, fmt.Sprintf("Kafka -> Iceberg on MinIO: %s events, %d partitions, commit interval %s",
		thousands(float64(rep.Events)), rep.Partitions, rep.CommitInterval))
	chart.Text(img, margin, margin+30, chart.Grey, fmt.Sprintf("median of runs; %s; %s; go run ./testing/sidebyside", rep.Machine, rep.Date[:min(10, len(rep.Date))]))

	panels := []panel{
		{"events/s (launch to all rows visible)", func(s summary) float64 { return s.eventsPerS }, func(v float64) string { return thousands(v) }, "higher is better"},
		{"seconds until every row is visible", func(s summary) float64 { return s.visibleS }, func(v float64) string { return fmt.Sprintf("%.1f s", v) }, "lower is better"},
		{"CPU seconds (process tree)", func(s summary) float64 { return s.cpuS }, func(v float64) string { return fmt.Sprintf("%.1f s", v) }, "lower is better"},
		{"peak RSS (process tree)", func(s summary) float64 { return s.peakRSSMiB }, func(v float64) string { return fmt.Sprintf("%.0f MiB", v) }, "lower is better"},
	}
	top := margin + headerH
	panelW := (chartW - 2*margin - panelGap) / 2
	for i, p := range panels {
		x0 := margin + (i%2)*(panelW+panelGap)
		y0 := top + (i/2)*(panelH+panelGap)
		drawPanel(img, image.Rect(x0, y0, x0+panelW, y0+panelH), p, ss)
	}
	return img
}

func drawPanel(img *image.RGBA, r image.Rectangle, p panel, ss []summary) {
	chart.Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), chart.Rule)
	chart.Text(img, r.Min.X, r.Min.Y+18, chart.Ink, p.title)
	chart.Text(img, r.Max.X-len(p.better)*7, r.Min.Y+18, chart.Grey, p.better)
	hi := 0.0
	for _, s := range ss {
		hi = max(hi, p.value(s))
	}
	if hi <= 0 {
		hi = 1
	}
	const valueW = 110 // room right of the longest bar for its value
	x0 := r.Min.X + labelW
	full := r.Max.X - x0 - valueW
	y := r.Min.Y + panelTop
	for _, s := range ss {
		v := p.value(s)
		w := int(float64(full) * v / hi)
		chart.Text(img, r.Min.X, y+barH/2+5, chart.Ink, labels[s.name])
		chart.Fill(img, image.Rect(x0, y, x0+max(w, 1), y+barH), colorOf[s.name])
		chart.Text(img, x0+w+6, y+barH/2+5, chart.Ink, p.unit(v))
		y += barH + barGap
	}
}

func writeChart(path string, rep Report) error { return chart.Save(path, drawChart(rep)) }
