package gold

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/tables"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

func TestTerms(t *testing.T) {
	cases := map[string][]string{
		"Debt market update":                   {"debt", "market", "update"},
		"The bond, the BOND and the rate-cut!": {"bond", "rate-cut"},
		"EU 2026 default on it":                {"2026", "default"},
		"":                                     nil,
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, Terms(in)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", in, diff)
		}
	}
}

var h = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC)

func row(src, title string, at time.Time) tables.SilverEvent {
	return tables.SilverEvent{Source: src, Title: title, Timestamp: at.UnixMicro()}
}

func TestAggregations(t *testing.T) {
	day := DayRows{Day: h.Unix() / 86400, Rows: []tables.SilverEvent{
		row("news", "Bond yields rise", h), row("news", "Bond rally", h.Add(time.Minute)),
		row("ft", "Yields fall", h.Add(time.Hour)),
	}}
	p, s := beam.NewPipelineWithRoot()
	days := beam.Create(s, day)
	passert.Equals(s, SourceDailyCounts(s, days),
		tables.SourceDaily{Day: int32(day.Day), Source: "news", Events: 2}, tables.SourceDaily{Day: int32(day.Day), Source: "ft", Events: 1})
	hour2 := h.Add(time.Hour).UnixMicro()
	passert.Equals(s, TrendingTerms(s, days, 2),
		tables.TrendingTerm{Hour: h.UnixMicro(), Rank: 1, Term: "bond", Mentions: 2},
		tables.TrendingTerm{Hour: h.UnixMicro(), Rank: 2, Term: "rally", Mentions: 1},
		tables.TrendingTerm{Hour: hour2, Rank: 1, Term: "fall", Mentions: 1},
		tables.TrendingTerm{Hour: hour2, Rank: 2, Term: "yields", Mentions: 1})
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
