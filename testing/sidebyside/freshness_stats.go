package main

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// The pure parts of the freshness mode: per-record lags from snapshots and
// their added rows, percentiles, the per-second series, the flat-lag test and
// the exactly-once check. No I/O here, so every piece is unit-tested.

// addedRow is what the analysis reads of one row: its Kafka coordinates and
// its Kafka timestamp in milliseconds.
type addedRow struct {
	Partition int32
	Offset    int64
	KafkaMs   int64
}

// snapshotRows is one snapshot's commit time (its timestamp-ms) and the rows
// it added.
type snapshotRows struct {
	ID       int64
	CommitMs int64
	Rows     []addedRow
}

// SnapshotPoint is one snapshot in the report: when it was committed, after
// the producer started, and the freshness of the rows it added.
type SnapshotPoint struct {
	AtS      float64 `json:"at_s"`
	Rows     int     `json:"rows"`
	MinLagMs int64   `json:"min_lag_ms"`
	MaxLagMs int64   `json:"max_lag_ms"`
}

// SecondPoint is one second of production (by Kafka timestamp, after the
// producer started): how fresh the records produced in it became.
type SecondPoint struct {
	Second   int   `json:"s"`
	Rows     int   `json:"rows"`
	P50LagMs int64 `json:"p50_lag_ms"`
	MaxLagMs int64 `json:"max_lag_ms"`
}

// attribution is the outcome of attribute: every measured record's lag, the
// two series, and what the exactly-once check found.
type attribution struct {
	// Lags are (commit time - Kafka timestamp) in ms of every record produced
	// at or after fromMs (the warm-up records before it are left out), sorted.
	Lags      []int64
	Snapshots []SnapshotPoint
	Seconds   []SecondPoint
	// Found is every row seen; Duplicates the rows seen more than once;
	// Missing the produced records never seen; Unexpected rows outside what
	// was produced.
	Found, Duplicates, Missing, Unexpected int64
}

// attribute computes per-record freshness from the snapshots (in any order)
// and checks that they hold every produced record exactly once. produced[p]
// is how many records partition p holds (offsets 0..n-1, one producer, no
// transactions); fromMs is when the measured production started.
func attribute(snaps []snapshotRows, produced []int64, fromMs int64) attribution {
	snaps = slices.Clone(snaps)
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].CommitMs < snaps[j].CommitMs })
	seen := make([][]uint64, len(produced))
	for p, n := range produced {
		seen[p] = make([]uint64, (n+63)/64)
	}
	var a attribution
	perSecond := map[int][]int64{}
	for _, s := range snaps {
		pt := SnapshotPoint{AtS: float64(s.CommitMs-fromMs) / 1000, MinLagMs: math.MaxInt64, MaxLagMs: math.MinInt64}
		for _, r := range s.Rows {
			a.Found++
			if r.Partition < 0 || int(r.Partition) >= len(produced) || r.Offset < 0 || r.Offset >= produced[r.Partition] {
				a.Unexpected++
				continue
			}
			w, bit := &seen[r.Partition][r.Offset/64], uint64(1)<<(r.Offset%64)
			if *w&bit != 0 {
				a.Duplicates++
				continue
			}
			*w |= bit
			if r.KafkaMs < fromMs {
				continue // a warm-up record
			}
			lag := s.CommitMs - r.KafkaMs
			a.Lags = append(a.Lags, lag)
			pt.Rows++
			pt.MinLagMs, pt.MaxLagMs = min(pt.MinLagMs, lag), max(pt.MaxLagMs, lag)
			sec := int((r.KafkaMs - fromMs) / 1000)
			perSecond[sec] = append(perSecond[sec], lag)
		}
		if pt.Rows > 0 {
			a.Snapshots = append(a.Snapshots, pt)
		}
	}
	for p, n := range produced {
		var got int64
		for _, w := range seen[p] {
			got += int64(bits.OnesCount64(w))
		}
		a.Missing += n - got
	}
	slices.Sort(a.Lags)
	secs := make([]int, 0, len(perSecond))
	for s := range perSecond {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	for _, s := range secs {
		ls := perSecond[s]
		slices.Sort(ls)
		a.Seconds = append(a.Seconds, SecondPoint{Second: s, Rows: len(ls), P50LagMs: percentile(ls, 50), MaxLagMs: ls[len(ls)-1]})
	}
	return a
}

// percentile is the nearest-rank percentile q (0 < q <= 100) of sorted: the
// smallest value with at least q% of the values at or below it. It is 0 for
// no values.
func percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// flatRule says when lag is flat: over the last third of the per-second
// series, the least-squares slope of the lag is at most MaxSlope (seconds of
// lag gained per second of wall time: 0.05 means the contender keeps at
// least 95% of the rate), and the end lag (the mean of the last tenth's
// per-second maxima, at least 3 points) is at most MaxEndLag. The slope is
// taken over the maxima of windows of up to 10 s (at least three windows),
// not over single seconds: a commit every 2 s makes each second's worst lag
// a sawtooth, which would tilt a short fit either way.
type flatRule struct {
	MaxSlope  float64 `json:"max_slope_s_per_s"`
	MaxEndLag float64 `json:"max_end_lag_s"`
}

// flatVerdict is what flatRule found.
type flatVerdict struct {
	Flat    bool    `json:"flat"`
	SlopeSS float64 `json:"slope_s_per_s"`
	EndLagS float64 `json:"end_lag_s"`
	Reason  string  `json:"reason,omitempty"`
}

// judge applies the rule to a per-second series.
func (f flatRule) judge(series []SecondPoint) flatVerdict {
	if len(series) < 6 {
		return flatVerdict{Reason: fmt.Sprintf("%d seconds of data: too few to judge", len(series))}
	}
	last := series[len(series)*2/3:]
	window := max(1, min(10, len(last)/3))
	var xs, ys []float64
	for i := 0; i+window <= len(last); i += window {
		var hi float64
		var mid float64
		for _, p := range last[i : i+window] {
			hi = max(hi, float64(p.MaxLagMs)/1000)
			mid += float64(p.Second) / float64(window)
		}
		xs, ys = append(xs, mid), append(ys, hi)
	}
	v := flatVerdict{SlopeSS: slope(xs, ys)}
	tail := series[len(series)-max(3, len(series)/10):]
	for _, p := range tail {
		v.EndLagS += float64(p.MaxLagMs) / 1000
	}
	v.EndLagS /= float64(len(tail))
	switch {
	case v.SlopeSS > f.MaxSlope:
		v.Reason = fmt.Sprintf("lag grows %.3f s per s over the last third (limit %.3f)", v.SlopeSS, f.MaxSlope)
	case v.EndLagS > f.MaxEndLag:
		v.Reason = fmt.Sprintf("end lag %.1f s (limit %.1f s)", v.EndLagS, f.MaxEndLag)
	default:
		v.Flat = true
	}
	return v
}

// slope is the least-squares slope of ys over xs; 0 when xs do not vary.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// sustainable is the highest rate whose run was flat and complete, per
// contender; 0 when none was.
func sustainable(runs []FreshResult) map[string]int {
	out := map[string]int{}
	for _, r := range runs {
		if _, ok := out[r.Contender]; !ok {
			out[r.Contender] = 0
		}
		if r.Verdict.Flat && r.Drained && r.Rate > out[r.Contender] {
			out[r.Contender] = r.Rate
		}
	}
	return out
}

// newestP50 is the median over snapshots of their freshest record's lag.
func newestP50(points []SnapshotPoint) int64 {
	var mins []int64
	for _, p := range points {
		mins = append(mins, p.MinLagMs)
	}
	slices.Sort(mins)
	return percentile(mins, 50)
}

// rateSearch is the short search for the sustainable rate: the rates in
// increasing order, and a contender whose lag was not flat at one rate
// skips the higher ones.
type rateSearch struct {
	rates    []int
	failedAt map[string]int
}

func newRateSearch(rates []int) *rateSearch {
	r := slices.Clone(rates)
	slices.Sort(r)
	return &rateSearch{rates: slices.Compact(r), failedAt: map[string]int{}}
}

// skip says whether a contender is done, and at which rate it failed.
func (s *rateSearch) skip(name string) (int, bool) {
	at, ok := s.failedAt[name]
	return at, ok
}

func (s *rateSearch) record(r FreshResult) {
	if _, ok := s.failedAt[r.Contender]; !ok && !r.Verdict.Flat {
		s.failedAt[r.Contender] = r.Rate
	}
}
