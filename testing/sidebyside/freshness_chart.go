package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"strings"

	"github.com/haade/haade/testing/chart"
)

// The freshness chart: one panel per rate, freshness over time in each, one
// line per contender: for each second of production, the worst freshness
// (commit time - Kafka timestamp) of the records produced in it.
const (
	freshPanelH = 300
	plotLeft    = 64 // room for the y axis' labels
	plotTop     = 44 // the panel's title and legend
	plotBottom  = 28 // the x axis' labels
)

func drawFreshChart(rep FreshReport) *image.RGBA {
	rates := freshRates(rep)
	chartH := margin + headerH + len(rates)*(freshPanelH+panelGap) + margin
	img := image.NewRGBA(image.Rect(0, 0, chartW, chartH))
	draw.Draw(img, img.Bounds(), &image.Uniform{chart.White}, image.Point{}, draw.Src)
	chart.Text(img, margin, margin+12, chart.Ink, fmt.Sprintf("Freshness over time (commit time - Kafka timestamp, worst record of each second), %d partitions, commit interval %s",
		rep.Partitions, rep.CommitInterval))
	chart.Text(img, margin, margin+30, chart.Grey, fmt.Sprintf("steady producer for %.0f s per run; %s; %s; go run ./testing/sidebyside --freshness",
		rep.DurationS, rep.Machine, rep.Date[:min(10, len(rep.Date))]))
	y := margin + headerH
	for _, rate := range rates {
		var rs []FreshResult
		for _, name := range contenderOrder {
			for _, r := range rep.Results {
				if r.Rate == rate && r.Contender == name {
					rs = append(rs, r)
				}
			}
		}
		drawFreshPanel(img, image.Rect(margin, y, chartW-margin, y+freshPanelH), rate, rep.DurationS, rs)
		y += freshPanelH + panelGap
	}
	return img
}

// freshRates are the rates that ran, in increasing order.
func freshRates(rep FreshReport) []int {
	var rates []int
	for _, r := range rep.Results {
		if !slices.Contains(rates, r.Rate) {
			rates = append(rates, r.Rate)
		}
	}
	slices.Sort(rates)
	return rates
}

// plotArea is where a panel's lines go.
func plotArea(r image.Rectangle) image.Rectangle {
	return image.Rect(r.Min.X+plotLeft, r.Min.Y+plotTop, r.Max.X-8, r.Max.Y-plotBottom)
}

// freshYMax is the top of a panel's y axis in seconds: the highest
// per-second lag, rounded up to a whole step, at least 1 s.
func freshYMax(rs []FreshResult) (top, step float64) {
	hi := 1.0
	for _, r := range rs {
		for _, p := range r.Seconds {
			hi = max(hi, float64(p.MaxLagMs)/1000)
		}
	}
	step = chart.NiceCeil(hi / 5)
	return math.Ceil(hi/step) * step, step
}

func drawFreshPanel(img *image.RGBA, r image.Rectangle, rate int, durationS float64, rs []FreshResult) {
	chart.Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), chart.Rule)
	chart.Text(img, r.Min.X, r.Min.Y+18, chart.Ink, fmt.Sprintf("%s events/s", thousands(float64(rate))))
	// The legend: each contender's colour, name and p99.
	x := r.Min.X + 160
	for _, res := range rs {
		chart.Fill(img, image.Rect(x, r.Min.Y+9, x+14, r.Min.Y+21), colorOf[res.Contender])
		flat := "flat"
		if !res.Verdict.Flat {
			flat = "NOT flat"
		}
		label := fmt.Sprintf("%s: p99 %.1f s, %s", shortLabel(res.Contender), float64(res.P99Ms)/1000, flat)
		chart.Text(img, x+20, r.Min.Y+19, chart.Ink, label)
		x += 20 + len(label)*7 + 24
	}
	a := plotArea(r)
	top, step := freshYMax(rs)
	for v := 0.0; v <= top+step/2; v += step {
		yy := a.Max.Y - int(float64(a.Dy())*v/top)
		chart.Fill(img, image.Rect(a.Min.X, yy, a.Max.X, yy+1), chart.Rule)
		l := fmt.Sprintf("%g s", v)
		chart.Text(img, a.Min.X-8-len(l)*7, yy+4, chart.Grey, l)
	}
	xStep := chart.NiceCeil(durationS / 8)
	for v := 0.0; v <= durationS+xStep/2; v += xStep {
		xx := a.Min.X + int(float64(a.Dx())*v/max(durationS, 1))
		chart.Fill(img, image.Rect(xx, a.Max.Y, xx+1, a.Max.Y+4), chart.Grey)
		l := fmt.Sprintf("%g s", v)
		chart.Text(img, xx-len(l)*7/2, a.Max.Y+17, chart.Grey, l)
	}
	for _, res := range rs {
		c := colorOf[res.Contender]
		px := func(p SecondPoint) image.Point {
			return image.Point{
				X: a.Min.X + int(float64(a.Dx())*(float64(p.Second)+0.5)/max(durationS, 1)),
				Y: a.Max.Y - int(float64(a.Dy())*float64(p.MaxLagMs)/1000/top),
			}
		}
		for i := 1; i < len(res.Seconds); i++ {
			line(img, px(res.Seconds[i-1]), px(res.Seconds[i]), c, a)
		}
	}
}

// shortLabel is a contender's name without its runtime, for the legend.
func shortLabel(name string) string {
	l := labels[name]
	if i := strings.Index(l, " ("); i > 0 {
		return l[:i]
	}
	return l
}

// line draws a 2-pixel line from p to q, clipped to clip.
func line(img *image.RGBA, p, q image.Point, c color.RGBA, clip image.Rectangle) {
	n := max(abs(q.X-p.X), abs(q.Y-p.Y), 1)
	for i := 0; i <= n; i++ {
		x := p.X + (q.X-p.X)*i/n
		y := p.Y + (q.Y-p.Y)*i/n
		for _, d := range []image.Point{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			pt := image.Point{x + d.X, y + d.Y}
			if pt.In(clip) {
				img.SetRGBA(pt.X, pt.Y, c)
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func writeFreshChart(path string, rep FreshReport) error {
	return chart.Save(path, drawFreshChart(rep))
}

// freshMarkdown is docs/benchmarks' freshness table and the sustainable rates.
func freshMarkdown(rep FreshReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "freshness: %.0f s of steady production per run, %d partitions, commit interval %s; %s; %s\n\n",
		rep.DurationS, rep.Partitions, rep.CommitInterval, rep.Machine, rep.Date)
	b.WriteString("| contender | commits | events/s asked | sent/s | p50 | p99 | max | newest record to commit (median) | end lag | lag slope | flat | drained | CPU s per s | peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rate := range freshRates(rep) {
		for _, name := range contenderOrder {
			for _, r := range rep.Results {
				if r.Rate != rate || r.Contender != name {
					continue
				}
				flat := "yes"
				if !r.Verdict.Flat {
					flat = "no: " + r.Verdict.Reason
				}
				drained := fmt.Sprintf("%.1f s", r.DrainS)
				if !r.Drained {
					drained = fmt.Sprintf("no: %s behind after %.0f s", thousands(float64(r.Behind)), r.DrainS)
				}
				fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %+.3f s/s | %s | %s | %.2f | %.0f MiB |\n",
					labels[name], r.Commit, thousands(float64(r.Rate)), thousands(r.AchievedRate),
					float64(r.P50Ms)/1000, float64(r.P99Ms)/1000, float64(r.MaxMs)/1000, float64(r.NewestP50Ms)/1000, r.Verdict.EndLagS, r.Verdict.SlopeSS,
					flat, drained, r.CPUPerWallS, float64(r.PeakRSSBytes)/(1<<20))
			}
		}
	}
	b.WriteString("\nhighest rate tried with flat lag:")
	for _, name := range contenderOrder {
		rate, ok := rep.Sustainable[name]
		if !ok {
			continue
		}
		if rate == 0 {
			fmt.Fprintf(&b, " %s none of %s;", shortLabel(name), joinRates(freshRates(rep)))
		} else {
			fmt.Fprintf(&b, " %s %s events/s;", shortLabel(name), thousands(float64(rate)))
		}
	}
	b.WriteString("\n")
	return b.String()
}

func joinRates(rates []int) string {
	var s []string
	for _, r := range rates {
		s = append(s, thousands(float64(r)))
	}
	return strings.Join(s, ", ")
}
