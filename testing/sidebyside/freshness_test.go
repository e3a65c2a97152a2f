package main

import (
	"image"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/chart"
)

func TestPercentileIsNearestRank(t *testing.T) {
	xs := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, tc := range []struct {
		in   []int64
		q    float64
		want int64
	}{
		{nil, 50, 0},
		{[]int64{7}, 99, 7},
		{xs, 50, 50},
		{xs, 99, 100},
		{xs, 100, 100},
		{xs, 10, 10},
		{xs, 11, 20},
		{xs, 0.1, 10},
	} {
		if got := percentile(tc.in, tc.q); got != tc.want {
			t.Errorf("percentile(%v, %v) = %d, want %d", tc.in, tc.q, got, tc.want)
		}
	}
}

// TestAttributeChargesEachRowToTheSnapshotThatAddedIt: two snapshots given
// out of order, a warm-up record before fromMs, and the exactly-once check's
// three kinds of fault.
func TestAttributeChargesEachRowToTheSnapshotThatAddedIt(t *testing.T) {
	const from = 1_000_000
	snaps := []snapshotRows{
		{ID: 2, CommitMs: from + 4000, Rows: []addedRow{
			{0, 2, from + 1500}, // produced in second 1, 2.5 s old at commit
			{1, 1, from + 2900}, // second 2, 1.1 s
		}},
		{ID: 1, CommitMs: from + 2000, Rows: []addedRow{
			{0, 0, from - 5000}, // the warm-up: checked, not measured
			{0, 1, from + 100},  // second 0, 1.9 s
			{1, 0, from + 800},  // second 0, 1.2 s
		}},
	}
	got := attribute(snaps, []int64{3, 2}, from)
	want := attribution{
		Lags: []int64{1100, 1200, 1900, 2500},
		Snapshots: []SnapshotPoint{
			{AtS: 2, Rows: 2, MinLagMs: 1200, MaxLagMs: 1900},
			{AtS: 4, Rows: 2, MinLagMs: 1100, MaxLagMs: 2500},
		},
		Seconds: []SecondPoint{
			{Second: 0, Rows: 2, P50LagMs: 1200, MaxLagMs: 1900},
			{Second: 1, Rows: 1, P50LagMs: 2500, MaxLagMs: 2500},
			{Second: 2, Rows: 1, P50LagMs: 1100, MaxLagMs: 1100},
		},
		Found: 5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attribute (-want +got):\n%s", diff)
	}
	if got := newestP50(got.Snapshots); got != 1100 {
		t.Errorf("newestP50 = %d, want 1100, the lower of the two snapshots' freshest (1200, 1100)", got)
	}

	// The same record in two snapshots, one never produced, one missing.
	bad := []snapshotRows{
		{ID: 1, CommitMs: from + 1000, Rows: []addedRow{{0, 0, from}, {0, 7, from}, {2, 0, from}}},
		{ID: 2, CommitMs: from + 3000, Rows: []addedRow{{0, 0, from}}},
	}
	a := attribute(bad, []int64{2}, from)
	if diff := cmp.Diff([4]int64{4, 1, 1, 2}, [4]int64{a.Found, a.Duplicates, a.Missing, a.Unexpected}); diff != "" {
		t.Errorf("found, duplicates, missing, unexpected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{1000}, a.Lags); diff != "" {
		t.Errorf("a duplicate's second copy must not count as a lag (-want +got):\n%s", diff)
	}
}

func series(n int, lag func(s int) float64) []SecondPoint {
	out := make([]SecondPoint, n)
	for i := range out {
		out[i] = SecondPoint{Second: i, Rows: 100, MaxLagMs: int64(lag(i) * 1000)}
	}
	return out
}

func TestFlatRule(t *testing.T) {
	rule := flatRule{MaxSlope: 0.05, MaxEndLag: 10}
	for _, tc := range []struct {
		name   string
		series []SecondPoint
		want   bool
		reason string
	}{
		// A 2 s commit interval: the worst record of each second waits 1-3 s.
		{"sawtooth", series(180, func(s int) float64 { return 1 + float64(s%2)*2 }), true, ""},
		// Commits every 3 s, with a stall of 1 s every 17 s: per-second
		// maxima that a one-second fit over a short span would tilt.
		{"irregular sawtooth", series(180, func(s int) float64 { return 1 + float64(s%3) + float64(s%17/16) }), true, ""},
		// A slow start that then keeps up: only the last third counts.
		{"catches up", series(180, func(s int) float64 { return max(2, 30-float64(s)) }), true, ""},
		// Keeps 90% of the rate: 0.1 s of lag per second.
		{"falls behind", series(180, func(s int) float64 { return 2 + 0.1*float64(s) }), false, "lag grows 0.100 s per s"},
		// Flat but far behind: a stall it never made up.
		{"flat and late", series(180, func(s int) float64 { return 25 }), false, "end lag 25.0 s"},
		{"too short", series(5, func(int) float64 { return 1 }), false, "too few"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := rule.judge(tc.series)
			if v.Flat != tc.want || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("judge = %+v, want flat %v and a reason with %q", v, tc.want, tc.reason)
			}
		})
	}
	v := rule.judge(series(90, func(s int) float64 { return 2 + 0.5*float64(s) }))
	if v.SlopeSS < 0.499 || v.SlopeSS > 0.501 || v.EndLagS != 44.5 {
		t.Errorf("judge of a straight line of slope 0.5 = %+v: want that slope and an end lag of 44.5 s, the mean of seconds 81-89", v)
	}
}

func TestSustainableIsTheHighestFlatDrainedRate(t *testing.T) {
	runs := []FreshResult{
		{Contender: "bronze", Rate: 20000, Drained: true, Verdict: flatVerdict{Flat: true}},
		{Contender: "bronze", Rate: 100000, Drained: true, Verdict: flatVerdict{Flat: true}},
		{Contender: "bronze", Rate: 50000, Drained: true, Verdict: flatVerdict{Flat: false}},
		{Contender: "spark", Rate: 20000, Drained: true, Verdict: flatVerdict{Flat: true}},
		{Contender: "spark", Rate: 50000, Drained: false, Verdict: flatVerdict{Flat: true}},
		{Contender: "connect", Rate: 20000, Drained: true},
	}
	want := map[string]int{"bronze": 100000, "spark": 20000, "connect": 0}
	if diff := cmp.Diff(want, sustainable(runs)); diff != "" {
		t.Errorf("sustainable (-want +got):\n%s", diff)
	}
}

func TestRateSearchStopsAContenderAtItsFirstFailure(t *testing.T) {
	s := newRateSearch([]int{100000, 20000, 50000, 20000})
	if diff := cmp.Diff([]int{20000, 50000, 100000}, s.rates); diff != "" {
		t.Errorf("rates (-want +got):\n%s", diff)
	}
	var ran []string
	for _, rate := range s.rates {
		for _, name := range []string{"bronze", "spark"} {
			if _, skip := s.skip(name); skip {
				continue
			}
			ran = append(ran, name+"@"+strconv.Itoa(rate))
			s.record(FreshResult{Contender: name, Rate: rate, Verdict: flatVerdict{Flat: name == "bronze" || rate < 50000}})
		}
	}
	if diff := cmp.Diff([]string{"bronze@20000", "spark@20000", "bronze@50000", "spark@50000", "bronze@100000"}, ran); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if at, _ := s.skip("spark"); at != 50000 {
		t.Errorf("spark failed at %d, want 50000", at)
	}
}

func TestParseArgsFreshness(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--freshness", "--rates=1000,x"}, "--rates="},
		{[]string{"--freshness", "--rate=-5"}, "--rate=-5"},
		{[]string{"--freshness", "--duration=1s"}, "--duration=1s"},
		{[]string{"--freshness", "--max-slope=0"}, "--max-slope=0"},
	} {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
	c, err := parseArgs([]string{"--freshness", "--rates=20000, 50000", "--duration=30s"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{20000, 50000}, c.Rates); diff != "" || !c.Freshness || c.Duration != 30*time.Second {
		t.Errorf("config %+v: want freshness, 30s and rates 20000, 50000 %s", c.FreshConfig, diff)
	}
	if c, _ := parseArgs([]string{"--freshness", "--rate=7000"}); !cmp.Equal([]int{7000}, c.Rates) {
		t.Errorf("--rate=7000 gave rates %v", c.Rates)
	}
}

// TestAppendAddedReadsEveryTimestampUnit builds the three columns as the
// tables hold them (micros) and in millis, and checks nulls are refused.
func TestAppendAddedReadsEveryTimestampUnit(t *testing.T) {
	batch := func(unit arrow.TimeUnit, ts []arrow.Timestamp, valid []bool) arrow.RecordBatch {
		mem := memory.NewGoAllocator()
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "kafka_partition", Type: arrow.PrimitiveTypes.Int32},
			{Name: "kafka_offset", Type: arrow.PrimitiveTypes.Int64},
			{Name: "kafka_timestamp", Type: &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, Nullable: true},
		}, nil)
		b := array.NewRecordBuilder(mem, sc)
		defer b.Release()
		b.Field(0).(*array.Int32Builder).AppendValues([]int32{3, 4}, nil)
		b.Field(1).(*array.Int64Builder).AppendValues([]int64{10, 11}, nil)
		b.Field(2).(*array.TimestampBuilder).AppendValues(ts, valid)
		return b.NewRecordBatch()
	}
	want := []addedRow{{3, 10, 1_700_000_000_123}, {4, 11, 1_700_000_000_999}}
	for _, tc := range []struct {
		unit arrow.TimeUnit
		ts   []arrow.Timestamp
	}{
		{arrow.Microsecond, []arrow.Timestamp{1_700_000_000_123_456, 1_700_000_000_999_000}},
		{arrow.Millisecond, []arrow.Timestamp{1_700_000_000_123, 1_700_000_000_999}},
	} {
		rec := batch(tc.unit, tc.ts, nil)
		got, err := appendAdded(nil, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v: rows (-want +got):\n%s", tc.unit, diff)
		}
	}
	rec := batch(arrow.Microsecond, []arrow.Timestamp{1, 2}, []bool{true, false})
	defer rec.Release()
	if _, err := appendAdded(nil, rec); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("a null kafka_timestamp gave %v, want an error", err)
	}
}

func freshReport() FreshReport {
	return FreshReport{
		Date: "2026-12-01T17:00:00Z", Machine: "2 cores", Partitions: 8, CommitInterval: "2s", DurationS: 60,
		Results: []FreshResult{
			{Contender: "bronze", Rate: 1000, Commit: "--commit-interval=2s", P99Ms: 2900, Drained: true, Verdict: flatVerdict{Flat: true},
				Seconds: series(60, func(int) float64 { return 2 })},
			{Contender: "spark", Rate: 1000, Commit: "trigger(processingTime=2s)", P99Ms: 8000, Drained: true, Verdict: flatVerdict{Flat: true},
				Seconds: series(60, func(int) float64 { return 8 })},
		},
		Sustainable: map[string]int{"bronze": 1000, "spark": 1000},
	}
}

// TestFreshChartDrawsEachLineAtItsLag finds each contender's colour in the
// column through the middle of the plot: bronze's line (2 s) must sit at a
// quarter of spark's height (8 s) above the axis.
func TestFreshChartDrawsEachLineAtItsLag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.png")
	if err := writeFreshChart(path, freshReport()); err != nil {
		t.Fatal(err)
	}
	img, err := chart.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	panel := plotArea(image.Rect(margin, margin+headerH, chartW-margin, margin+headerH+freshPanelH))
	x := panel.Min.X + panel.Dx()/2
	rowOf := func(name string) int {
		c := colorOf[name]
		for y := panel.Min.Y; y < panel.Max.Y; y++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(b>>8) == c.B {
				return y
			}
		}
		t.Fatalf("no %s line in column %d", name, x)
		return 0
	}
	hb, hs := panel.Max.Y-rowOf("bronze"), panel.Max.Y-rowOf("spark")
	if want := float64(hs) / 4; float64(hb) < want-3 || float64(hb) > want+3 {
		t.Errorf("bronze's line is %d px above the axis, want about %.0f (spark's is %d)", hb, want, hs)
	}
	md := freshMarkdown(freshReport())
	for _, want := range []string{"| HAADE bronze (Beam Go, Prism) | `--commit-interval=2s` | 1,000 |", "| 2.90 s |", "HAADE bronze 1,000 events/s"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
