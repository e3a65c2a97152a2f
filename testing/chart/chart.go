// Package chart draws the project's figures as PNG images with the standard
// library's image packages and x/image's fixed 7×13 font: panels of lines over
// time (the soak's runs, the dashboard's panels from Prometheus), and the
// drawing primitives the side-by-side harness's bar charts use.
package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Colours of the figures: a line's colour is Palette[i % len(Palette)], i its
// place in its panel.
var (
	Palette = []color.RGBA{{66, 99, 235, 255}, {224, 49, 49, 255}, {12, 166, 120, 255}, {230, 119, 0, 255},
		{174, 62, 201, 255}, {16, 152, 173, 255}, {134, 142, 150, 255}, {245, 159, 0, 255}}
	White = color.RGBA{255, 255, 255, 255}
	Ink   = color.RGBA{33, 37, 41, 255}
	Grey  = color.RGBA{134, 142, 150, 255}
	Rule  = color.RGBA{222, 226, 230, 255}
)

// Point is one sample of a line; a NaN Y is a gap.
type Point struct{ X, Y float64 }

// Line is one series of a panel.
type Line struct {
	Label  string
	Points []Point
}

// Panel is one figure: its lines against X, in XUnit, and Y, in Unit. The X
// axis runs from XMin to XMax when XMax > XMin, else over the points (and 0).
type Panel struct {
	Title       string
	Unit, XUnit string
	XMin, XMax  float64
	Lines       []Line
}

const (
	width, margin, header, panelH, plotLeft, legendH = 1000, 24, 44, 250, 76, 16
)

// Lines draws the panels, cols of them side by side, under a title and a
// subtitle (either may be empty).
func Lines(title, subtitle string, cols int, panels []Panel) *image.RGBA {
	cols = max(cols, 1)
	rows := (len(panels) + cols - 1) / cols
	img := image.NewRGBA(image.Rect(0, 0, width, margin+header+rows*panelH+margin))
	draw.Draw(img, img.Bounds(), &image.Uniform{White}, image.Point{}, draw.Src)
	Text(img, margin, margin+12, Ink, title)
	Text(img, margin, margin+30, Grey, subtitle)
	const gap = 24
	w := (width - 2*margin - (cols-1)*gap) / cols
	for i, p := range panels {
		x0 := margin + (i%cols)*(w+gap)
		y0 := margin + header + (i/cols)*panelH
		linePanel(img, image.Rect(x0, y0, x0+w, y0+panelH-20), p)
	}
	return img
}

func linePanel(img *image.RGBA, r image.Rectangle, p Panel) {
	Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), Rule)
	Text(img, r.Min.X, r.Min.Y+16, Ink, p.Title)
	// The legend: as many labels as fit on one line.
	x := r.Min.X
	for i, l := range p.Lines {
		w := 20 + 7*len(l.Label) + 16
		if x+w > r.Max.X {
			Text(img, x, r.Min.Y+16+legendH, Grey, fmt.Sprintf("+%d more", len(p.Lines)-i))
			break
		}
		Fill(img, image.Rect(x, r.Min.Y+16+legendH-9, x+12, r.Min.Y+16+legendH+1), Palette[i%len(Palette)])
		Text(img, x+16, r.Min.Y+16+legendH, Ink, l.Label)
		x += w
	}
	plot := image.Rect(r.Min.X+plotLeft, r.Min.Y+24+legendH+8, r.Max.X-10, r.Max.Y-18)
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			minX, maxX = math.Min(minX, pt.X), math.Max(maxX, pt.X)
			if !math.IsNaN(pt.Y) && !math.IsInf(pt.Y, 0) {
				maxY = math.Max(maxY, pt.Y)
			}
		}
	}
	if math.IsInf(minX, 0) {
		Text(img, plot.Min.X, plot.Min.Y+plot.Dy()/2, Grey, "no data")
		return
	}
	minX = math.Min(minX, 0)
	if p.XMax > p.XMin {
		minX, maxX = p.XMin, p.XMax
	}
	if maxX <= minX {
		maxX = minX + 1
	}
	if maxY <= 0 {
		maxY = 1
	}
	maxY = NiceCeil(maxY * 1.05)
	for k := 0; k <= 4; k++ {
		y := plot.Max.Y - k*plot.Dy()/4
		Fill(img, image.Rect(plot.Min.X, y, plot.Max.X, y+1), Rule)
		Text(img, r.Min.X, y+4, Grey, fmt.Sprintf("%.4g %s", maxY*float64(k)/4, p.Unit))
	}
	step := NiceCeil((maxX - minX) / 6)
	maxX = minX + math.Ceil((maxX-minX)/step)*step
	for v := minX; v <= maxX+step/2; v += step {
		x := plot.Min.X + int(float64(plot.Dx())*(v-minX)/(maxX-minX))
		Text(img, x-10, plot.Max.Y+14, Grey, fmt.Sprintf("%.4g %s", v, p.XUnit))
	}
	for i, l := range p.Lines {
		c := Palette[i%len(Palette)]
		var px, py int
		have := false
		for _, pt := range l.Points {
			if math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) {
				have = false
				continue
			}
			x := plot.Min.X + int(float64(plot.Dx())*(pt.X-minX)/(maxX-minX))
			y := plot.Max.Y - int(float64(plot.Dy())*pt.Y/maxY)
			if have {
				line(img, px, py, x, y, c)
			}
			Fill(img, image.Rect(x-1, y-1, x+2, y+2), c)
			px, py, have = x, y, true
		}
	}
}

// NiceCeil rounds v up to 1, 2 or 5 times a power of ten.
func NiceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	n := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= n; i++ {
		x := x0 + (x1-x0)*i/n
		y := y0 + (y1-y0)*i/n
		Fill(img, image.Rect(x, y, x+2, y+2), c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Fill paints r with c.
func Fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

// Text draws s with its baseline at y, in the 7×13 fixed font.
func Text(img *image.RGBA, x, y int, c color.RGBA, s string) {
	d := font.Drawer{Dst: img, Src: &image.Uniform{c}, Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// Load reads the PNG at path.
func Load(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// Save writes img to path as a PNG.
func Save(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
