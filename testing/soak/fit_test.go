package main

import (
	"math"
	"testing"
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
