package main

import (
	"fmt"
	"math"
	"time"
)

// Sample is one minute's figures. A figure that could not be read is -1.
type Sample struct {
	Time    time.Time `json:"time"`
	Elapsed float64   `json:"elapsed_s"`
	// CheckpointBytes is the state size of the latest completed Flink checkpoint.
	CheckpointBytes int64 `json:"checkpoint_bytes"`
	// Checkpoints and FailedCheckpoints are Flink's counts so far.
	Checkpoints       int64 `json:"checkpoints"`
	FailedCheckpoints int64 `json:"failed_checkpoints"`
	// HeapBytes is the JVM's used heap right after a full GC (jcmd GC.run).
	HeapBytes int64 `json:"heap_after_gc_bytes"`
	// Produced is the topic's end offsets summed, Rows the rows of bronze and
	// its dead-letter table, Lag the difference.
	Produced int64 `json:"produced"`
	Rows     int64 `json:"rows"`
	Lag      int64 `json:"lag"`
	// FreshnessS is how old the newest bronze snapshot is, in seconds.
	FreshnessS float64 `json:"freshness_s"`
	JobState   string  `json:"job_state"`
}

// Fit is a least-squares line y = a + b*x over the samples after warm-up.
type Fit struct {
	Samples int `json:"samples"`
	// SlopePerMin is b, in the figure's unit per minute.
	SlopePerMin float64 `json:"slope_per_min"`
	Mean        float64 `json:"mean"`
	// GrowthPct is the fitted growth over the window, as a percentage of the
	// mean: 100 * b * span / mean.
	GrowthPct float64 `json:"growth_pct"`
	First     float64 `json:"first"`
	Last      float64 `json:"last"`
}

// fitGrowth fits y against minutes over the points with x >= fromMin whose
// y is not negative (not read). It needs two points.
func fitGrowth(xsMin, ys []float64, fromMin float64) (Fit, error) {
	var x, y []float64
	for i := range xsMin {
		if xsMin[i] >= fromMin && ys[i] >= 0 {
			x = append(x, xsMin[i])
			y = append(y, ys[i])
		}
	}
	n := float64(len(x))
	if len(x) < 2 {
		return Fit{Samples: len(x)}, fmt.Errorf("%d samples after warm-up, need at least 2", len(x))
	}
	var sx, sy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
	}
	mx, my := sx/n, sy/n
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return Fit{Samples: len(x)}, fmt.Errorf("all samples after warm-up at the same time")
	}
	b := sxy / sxx
	f := Fit{Samples: len(x), SlopePerMin: b, Mean: my, First: y[0], Last: y[len(y)-1]}
	if my > 0 {
		f.GrowthPct = 100 * b * (x[len(x)-1] - x[0]) / my
	} else if b > 0 {
		f.GrowthPct = math.Inf(1)
	}
	return f, nil
}
