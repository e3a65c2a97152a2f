// Package gold computes analytics over silver: events per source per day,
// and the trending terms of each hour. Each stage recomputes whole days
// from the silver table, so writing its output by overwriting those days
// is idempotent.
package gold

import (
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	beam.RegisterType(reflect.TypeOf(DayRows{}))
	register.Function2x0[DayRows, func(tables.SourceDaily)](sourceDaily)
	register.Emitter1[tables.SourceDaily]()
	register.DoFn2x0[DayRows, func(tables.TrendingTerm)](&trendingFn{})
	register.Emitter1[tables.TrendingTerm]()
}

// DayRows holds every silver row of one event day: the batch type that
// snapshots.ReadDayBatches fills, one per day that new silver snapshots
// touch (snapshots.TouchedDays).
type DayRows struct {
	Day  int64 // days since the epoch
	Rows []tables.SilverEvent
}

const (
	hourMicros = int64(time.Hour / time.Microsecond)
)

// SourceDailyCounts counts PCollection<DayRows> per source and returns
// PCollection<tables.SourceDaily>.
func SourceDailyCounts(s beam.Scope, days beam.PCollection) beam.PCollection {
	s = s.Scope("gold.SourceDaily")
	return beam.ParDo(s, sourceDaily, days)
}

func sourceDaily(d DayRows, emit func(tables.SourceDaily)) {
	counts := map[string]int64{}
	for _, r := range d.Rows {
		counts[r.Source]++
	}
	for src, n := range counts {
		emit(tables.SourceDaily{Day: int32(d.Day), Source: src, Events: n})
	}
}

// TrendingTerms ranks the terms of the titles of each hour of
// PCollection<DayRows> and returns the top n of each hour, as
// PCollection<tables.TrendingTerm>. Ties are broken by term, so the result does not
// depend on row order. Default n: 10.
func TrendingTerms(s beam.Scope, days beam.PCollection, n int) beam.PCollection {
	s = s.Scope("gold.TrendingTerms")
	if n <= 0 {
		n = 10
	}
	return beam.ParDo(s, &trendingFn{Top: n}, days)
}

type trendingFn struct{ Top int }

func (f *trendingFn) ProcessElement(d DayRows, emit func(tables.TrendingTerm)) {
	perHour := map[int64]map[string]int64{}
	for _, r := range d.Rows {
		h := r.Timestamp / hourMicros * hourMicros
		if perHour[h] == nil {
			perHour[h] = map[string]int64{}
		}
		for _, t := range Terms(r.Title) {
			perHour[h][t]++
		}
	}
	for h, counts := range perHour {
		type tc struct {
			term string
			n    int64
		}
		var all []tc
		for t, n := range counts {
			all = append(all, tc{t, n})
		}
		sort.Slice(all, func(i, j int) bool {
			if all[i].n != all[j].n {
				return all[i].n > all[j].n
			}
			return all[i].term < all[j].term
		})
		for i := 0; i < len(all) && i < f.Top; i++ {
			emit(tables.TrendingTerm{Hour: h, Rank: int32(i + 1), Term: all[i].term, Mentions: all[i].n})
		}
	}
}

var stopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "into": true,
	"over": true, "after": true, "amid": true}

// Terms splits a title into lower-case terms of three or more letters or
// digits, without common stop words; each term counts once per title.
func Terms(title string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	}) {
		w = strings.Trim(w, "-")
		if len([]rune(w)) < 3 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}
