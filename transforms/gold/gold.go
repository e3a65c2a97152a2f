// Package gold computes analytics over silver: events per source per day,
// and the trending terms of each hour. Each stage recomputes whole days
// from the silver table, so writing its output by overwriting those days
// is idempotent.
package gold

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/snapshots"
	"github.com/haade/haade/transforms/silver"
)

func init() {
	for _, t := range []any{SourceDaily{}, TrendingTerm{}, DayRows{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	register.DoFn2x1[snapshots.SnapshotRows, func(int64), error](&daysFn{})
	register.Emitter1[int64]()
	register.DoFn3x1[context.Context, int64, func(DayRows), error](&dayRowsFn{})
	register.Emitter1[DayRows]()
	register.Function2x0[DayRows, func(SourceDaily)](sourceDaily)
	register.Emitter1[SourceDaily]()
	register.DoFn2x0[DayRows, func(TrendingTerm)](&trendingFn{})
	register.Emitter1[TrendingTerm]()
}

// SourceDaily is one row of lakehouse.gold_source_daily.
type SourceDaily struct {
	Day    int32  `iceberg:"day,required,date"`
	Source string `iceberg:"source,required"`
	Events int64  `iceberg:"events,required"`
}

// TrendingTerm is one row of lakehouse.gold_trending_terms: one of the top
// terms of an hour's titles.
type TrendingTerm struct {
	Hour     int64  `iceberg:"hour,required,timestamptz"`
	Rank     int32  `iceberg:"rank,required"`
	Term     string `iceberg:"term,required"`
	Mentions int64  `iceberg:"mentions,required"`
}

// DayRows holds every silver row of one event day.
type DayRows struct {
	Day  int64 // days since the epoch
	Rows []silver.Event
}

const (
	dayMicros  = int64(24 * time.Hour / time.Microsecond)
	hourMicros = int64(time.Hour / time.Microsecond)
)

// TouchedDays returns PCollection<int64>: the distinct event days (days
// since the epoch) of the silver rows in PCollection<snapshots.SnapshotRows>.
func TouchedDays(s beam.Scope, snapshots beam.PCollection) beam.PCollection {
	s = s.Scope("gold.TouchedDays")
	return filter.Distinct(s, beam.ParDo(s, &daysFn{}, snapshots))
}

type daysFn struct{}

func (daysFn) ProcessElement(sr snapshots.SnapshotRows, emit func(int64)) error {
	var rows []silver.Event
	if err := sr.Decode(&rows); err != nil {
		return err
	}
	seen := map[int64]bool{}
	for _, r := range rows {
		d := r.Timestamp / dayMicros
		if !seen[d] {
			seen[d] = true
			emit(d)
		}
	}
	return nil
}

// ReadDays reads every silver row of each day in PCollection<int64> and
// returns PCollection<DayRows>. The silver table is partitioned by
// day(timestamp), so each day reads one partition.
func ReadDays(s beam.Scope, cat icebergio.CatalogConfig, silverTable string, days beam.PCollection) beam.PCollection {
	s = s.Scope("gold.ReadDays")
	return beam.ParDo(s, &dayRowsFn{Catalog: cat, Table: silverTable}, days)
}

type dayRowsFn struct {
	Catalog icebergio.CatalogConfig
	Table   string
}

func (f *dayRowsFn) ProcessElement(ctx context.Context, day int64, emit func(DayRows)) error {
	var rows []silver.Event
	flt := iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("timestamp"), iceberg.Timestamp(day*dayMicros)),
		iceberg.LessThan(iceberg.Reference("timestamp"), iceberg.Timestamp((day+1)*dayMicros)))
	if err := icebergio.ScanRows(ctx, f.Catalog, f.Table, &rows, table.WithRowFilter(flt)); err != nil {
		return fmt.Errorf("gold: read day %d of %s: %w", day, f.Table, err)
	}
	emit(DayRows{Day: day, Rows: rows})
	return nil
}

// SourceDailyCounts counts PCollection<DayRows> per source and returns
// PCollection<SourceDaily>.
func SourceDailyCounts(s beam.Scope, days beam.PCollection) beam.PCollection {
	s = s.Scope("gold.SourceDaily")
	return beam.ParDo(s, sourceDaily, days)
}

func sourceDaily(d DayRows, emit func(SourceDaily)) {
	counts := map[string]int64{}
	for _, r := range d.Rows {
		counts[r.Source]++
	}
	for src, n := range counts {
		emit(SourceDaily{Day: int32(d.Day), Source: src, Events: n})
	}
}

// TrendingTerms ranks the terms of the titles of each hour of
// PCollection<DayRows> and returns the top n of each hour, as
// PCollection<TrendingTerm>. Ties are broken by term, so the result does not
// depend on row order. Default n: 10.
func TrendingTerms(s beam.Scope, days beam.PCollection, n int) beam.PCollection {
	s = s.Scope("gold.TrendingTerms")
	if n <= 0 {
		n = 10
	}
	return beam.ParDo(s, &trendingFn{Top: n}, days)
}

type trendingFn struct{ Top int }

func (f *trendingFn) ProcessElement(d DayRows, emit func(TrendingTerm)) {
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
			emit(TrendingTerm{Hour: h, Rank: int32(i + 1), Term: all[i].term, Mentions: all[i].n})
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
