package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// series is one run in a chart: its label, colour and samples.
type series struct {
	label string
	col   color.RGBA
	rep   Report
}

var palette = []color.RGBA{{66, 99, 235, 255}, {224, 49, 49, 255}, {12, 166, 120, 255}, {230, 119, 0, 255}}

var (
	colWhite = color.RGBA{255, 255, 255, 255}
	colInk   = color.RGBA{33, 37, 41, 255}
	colGrey  = color.RGBA{134, 142, 150, 255}
	colRule  = color.RGBA{222, 226, 230, 255}
)

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

const (
	chartW, panelH, chartMargin, chartHeader, plotLeft = 1000, 230, 24, 70, 70
)

// drawSoakChart draws every panel with one line per series.
func drawSoakChart(title string, ss []series) *image.RGBA {
	h := chartMargin + chartHeader + len(chartPanels)*panelH + chartMargin
	img := image.NewRGBA(image.Rect(0, 0, chartW, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{colWhite}, image.Point{}, draw.Src)
	drawText(img, chartMargin, chartMargin+12, colInk, title)
	x := chartMargin
	for _, s := range ss {
		fillRect(img, image.Rect(x, chartMargin+30, x+14, chartMargin+42), s.col)
		drawText(img, x+20, chartMargin+41, colInk, s.label)
		x += 20 + 7*len(s.label) + 30
	}
	for i, p := range chartPanels {
		y0 := chartMargin + chartHeader + i*panelH
		drawLinePanel(img, image.Rect(chartMargin, y0, chartW-chartMargin, y0+panelH-20), p, ss)
	}
	return img
}

func drawLinePanel(img *image.RGBA, r image.Rectangle, p chartPanel, ss []series) {
	drawText(img, r.Min.X, r.Min.Y+14, colInk, p.title)
	plot := image.Rect(r.Min.X+plotLeft, r.Min.Y+24, r.Max.X-10, r.Max.Y-18)
	maxX, maxY := 1.0, 0.0
	for _, s := range ss {
		for _, smp := range s.rep.Samples {
			maxX = math.Max(maxX, smp.Elapsed/60)
			maxY = math.Max(maxY, p.value(smp, s.rep))
		}
	}
	if maxY <= 0 {
		maxY = 1
	}
	maxY = niceCeil(maxY * 1.05)
	for k := 0; k <= 4; k++ {
		y := plot.Max.Y - k*plot.Dy()/4
		fillRect(img, image.Rect(plot.Min.X, y, plot.Max.X, y+1), colRule)
		drawText(img, r.Min.X, y+4, colGrey, fmt.Sprintf("%.4g %s", maxY*float64(k)/4, p.unit))
	}
	step := niceCeil(maxX / 6)
	maxX = math.Ceil(maxX/step) * step
	for v := 0.0; v <= maxX+step/2; v += step {
		x := plot.Min.X + int(float64(plot.Dx())*v/maxX)
		drawText(img, x-10, plot.Max.Y+14, colGrey, fmt.Sprintf("%.4g min", v))
	}
	for _, s := range ss {
		var px, py int
		have := false
		for _, smp := range s.rep.Samples {
			v := p.value(smp, s.rep)
			if v < 0 {
				have = false
				continue
			}
			x := plot.Min.X + int(float64(plot.Dx())*smp.Elapsed/60/maxX)
			y := plot.Max.Y - int(float64(plot.Dy())*v/maxY)
			if have {
				drawLine(img, px, py, x, y, s.col)
			}
			fillRect(img, image.Rect(x-1, y-1, x+2, y+2), s.col)
			px, py, have = x, y, true
		}
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func drawLine(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	n := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= n; i++ {
		x := x0 + (x1-x0)*i/n
		y := y0 + (y1-y0)*i/n
		fillRect(img, image.Rect(x, y, x+2, y+2), c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

func drawText(img *image.RGBA, x, y int, c color.RGBA, s string) {
	d := font.Drawer{Dst: img, Src: &image.Uniform{c}, Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// chart reads soak.json files given as LABEL=PATH and writes a PNG.
func chart(title, out string, inputs []string) error {
	var ss []series
	for i, in := range inputs {
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
		ss = append(ss, series{label: label, col: palette[i%len(palette)], rep: rep})
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(f, drawSoakChart(title, ss)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
