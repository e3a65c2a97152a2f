// Package sample generates realistic fintech-debt events as JSON, as the
// producers of fintech.debt.raw send them: the embedded demo, the
// producer command and the tests all use it.
package sample

import (
	"fmt"
	"math/rand/v2"
	"time"
)

var (
	sources = []string{"news", "Reuters", " bloomberg ", "FT", "sec-filings", "twitter", "central-bank", "rating-agency"}
	verbs   = []string{"update", "downgrade", "upgrade", "default warning", "issuance", "refinancing", "yield spike", "restructuring"}
	nouns   = []string{"Debt market", "Sovereign bond", "Corporate credit", "High-yield", "Municipal debt", "Treasury", "Emerging-market debt", "Leveraged loan"}
)

// sampleBase is the event time of Sample's first event.
var sampleBase = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC)

// Generator makes realistic fintech-debt events as JSON, one at a time,
// deterministic for a seed and a clock: the producer streams them, and
// Sample collects them. About 1 in 10 events has an extra member and an
// offset timestamp, 1 in 10 a null title. It is not safe for concurrent use.
type Generator struct {
	// Clock returns the event time of event i (0-based), before up to one
	// second of random jitter is added. Default: Sample's clock,
	// 2026-05-19T10:00:00Z plus i seconds.
	Clock func(i int) time.Time

	// UTC writes every timestamp in UTC ("Z"), never with an offset: for
	// consumers that cannot parse offsets.
	UTC bool

	r         *rand.Rand
	badRatio  float64
	malformed [][]byte
	i         int
}

// NewGenerator returns a generator for seed. About badRatio of its events
// are malformed: values drawn from malformed (none when it is empty).
func NewGenerator(seed uint64, badRatio float64, malformed [][]byte) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), badRatio: badRatio, malformed: malformed}
}

// LiveClock is a Generator clock for a running producer: events happened
// up to a second before they are sent.
func LiveClock(int) time.Time { return time.Now().Add(-time.Second) }

// Next returns the next event, and whether it is one of the malformed values.
func (g *Generator) Next() (value []byte, malformed bool) {
	i := g.i
	g.i++
	r := g.r
	if len(g.malformed) > 0 && r.Float64() < g.badRatio {
		return g.malformed[r.IntN(len(g.malformed))], true
	}
	at := sampleBase.Add(time.Duration(i) * time.Second)
	if g.Clock != nil {
		at = g.Clock(i)
	}
	ts := at.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
	src := sources[r.IntN(len(sources))]
	title := fmt.Sprintf("%s %s", nouns[r.IntN(len(nouns))], verbs[r.IntN(len(verbs))])
	switch r.IntN(10) {
	case 0: // an extra member, and an offset timestamp
		zone := time.FixedZone("", 2*3600)
		if g.UTC {
			zone = time.UTC
		}
		return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q, "amount_musd": %d, "currency": "USD"}`,
			src, title, ts.In(zone).Format(time.RFC3339Nano), r.IntN(5000)), false
	case 1: // a null title
		return fmt.Appendf(nil, `{"source": %q, "title": null, "timestamp": %q}`, src, ts.UTC().Format(time.RFC3339)), false
	default:
		return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q}`, src, title, ts.UTC().Format(time.RFC3339)), false
	}
}

// Sample returns n realistic fintech-debt events as JSON, deterministic for
// a seed, with event times one second apart from 2026-05-19T10:00:00Z. About
// badRatio of them are malformed, drawn from malformed.
func Sample(n int, seed uint64, badRatio float64, malformed [][]byte) [][]byte {
	g := NewGenerator(seed, badRatio, malformed)
	out := make([][]byte, n)
	for i := range out {
		out[i], _ = g.Next()
	}
	return out
}
