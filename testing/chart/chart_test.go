package chart

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"testing"
)

// count counts the pixels of colour c in r.
func count(img *image.RGBA, r image.Rectangle, c color.RGBA) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.RGBAAt(x, y) == c {
				n++
			}
		}
	}
	return n
}

func TestLinesDrawsEachLineInItsPanel(t *testing.T) {
	panels := []Panel{
		{Title: "left", Unit: "s", XUnit: "min", Lines: []Line{
			{Label: "a", Points: []Point{{0, 1}, {1, 2}, {2, 3}}},
			{Label: "b", Points: []Point{{0, 3}, {1, math.NaN()}, {2, 1}}},
		}},
		{Title: "right, empty"},
	}
	img := Lines("title", "subtitle", 2, panels)
	if w := img.Bounds().Dx(); w != width {
		t.Fatalf("width %d, want %d", w, width)
	}
	half := img.Bounds().Dx() / 2
	left := image.Rect(0, margin+header, half, img.Bounds().Dy())
	right := image.Rect(half, margin+header, img.Bounds().Dx(), img.Bounds().Dy())
	a, b := count(img, left, Palette[0]), count(img, left, Palette[1])
	if a == 0 || b == 0 {
		t.Errorf("left panel: %d pixels of line a, %d of line b; want both drawn", a, b)
	}
	// b has a gap: its two points are drawn, with no segment between them, so
	// it has far fewer pixels than a, which joins three.
	if b*2 > a {
		t.Errorf("line b, with a gap, has %d pixels against a's %d: the gap was drawn", b, a)
	}
	if n := count(img, right, Palette[0]); n != 0 {
		t.Errorf("the empty right panel has %d pixels of the first colour", n)
	}
}

func TestSaveWritesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	if err := Save(path, Lines("t", "", 1, []Panel{{Title: "p"}})); err != nil {
		t.Fatal(err)
	}
	img, err := Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if img.Bounds().Dx() != width {
		t.Errorf("width %d, want %d", img.Bounds().Dx(), width)
	}
}

func TestNiceCeil(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0.7, 1}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {140, 200}, {0, 1}} {
		if got := NiceCeil(c.in); got != c.want {
			t.Errorf("NiceCeil(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}
