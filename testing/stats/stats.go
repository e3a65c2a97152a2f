// Package stats holds the small summaries that the measuring harnesses
// (testing/benchmark, testing/sidebyside) report.
package stats

import "slices"

// Median is the middle value of xs, or the mean of the two middle ones;
// 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
