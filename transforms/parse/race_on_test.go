//go:build race

package parse

// raceEnabled: sync.Pool drops items at random under the race detector,
// so allocation counts are not meaningful.
const raceEnabled = true
