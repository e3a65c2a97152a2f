package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"

	"github.com/haade/haade/internal/flagenv"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/tables"
)

var bin string

// TestMain builds the real bronze and silver pipelines: gold runs over
// tables they made.
func TestMain(m *testing.M) {
	bins, done := cmdtest.BuildTemp("../bronze", "../silver")
	bin = filepath.Dir(bins[0])
	code := ptest.MainRetWithDefault(m, "prism")
	done()
	os.Exit(code)
}

func runBin(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(bin, name), args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func runGold(t *testing.T, cat icebergio.CatalogConfig) {
	t.Helper()
	fs := runners.NewFlagSet("gold")
	mk := flags(fs)
	if err := flagenv.Parse(fs, []string{"--catalog-uri=" + cat.URI, "--warehouse=" + cat.Warehouse, "--top-terms=2"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	cfg, err := mk()
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := build(context.Background(), s, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := runners.Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
}

func ev(src, title string, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q}`, src, title, ts.Format(time.RFC3339))
}

func goldRows(t *testing.T, cat icebergio.CatalogConfig) ([]tables.SourceDaily, []tables.TrendingTerm) {
	t.Helper()
	var daily []tables.SourceDaily
	var terms []tables.TrendingTerm
	if err := icebergio.ScanRows(context.Background(), cat, "lakehouse.gold_source_daily", &daily); err != nil {
		t.Fatal(err)
	}
	if err := icebergio.ScanRows(context.Background(), cat, "lakehouse.gold_trending_terms", &terms); err != nil {
		t.Fatal(err)
	}
	sort.Slice(daily, func(i, j int) bool { return fmt.Sprint(daily[i]) < fmt.Sprint(daily[j]) })
	sort.Slice(terms, func(i, j int) bool { return fmt.Sprint(terms[i]) < fmt.Sprint(terms[j]) })
	return daily, terms
}

// The medallion flow end to end: Kafka -> bronze -> silver -> gold, with
// the real pipelines. A rerun of gold changes nothing; new events
// recompute only the days they touch.
func TestGoldOverSilver(t *testing.T) {
	k, err := kafkatest.Start("fintech.debt.raw", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	dir := t.TempDir()
	cat := icebergio.CatalogConfig{URI: filepath.Join(dir, "c.db"), Warehouse: filepath.Join(dir, "w")}
	common := []string{"--catalog-uri=" + cat.URI, "--warehouse=" + cat.Warehouse, "--commit-interval=1s"}
	d1 := time.Date(2026, 5, 19, 10, 5, 0, 0, time.UTC)
	d2 := d1.Add(24 * time.Hour)
	produce := func(vals ...[]byte) {
		if err := kafkatest.Produce(context.Background(), k.Brokers(), "fintech.debt.raw", vals); err != nil {
			t.Fatal(err)
		}
		runBin(t, "bronze", append([]string{"--brokers=" + k.Brokers()[0], "--bounded", "--metrics-addr="}, common...)...)
		runBin(t, "silver", append([]string{"--bounded"}, common...)...)
	}
	produce(
		ev("news", "Bond yields rise", d1),
		ev("news", "Bond market rally", d1.Add(time.Minute)),
		ev("FT", "Sovereign bond default", d1.Add(2*time.Minute)),
		ev("FT", "Sovereign bond default", d1.Add(2*time.Minute)), // duplicate: silver drops it
	)
	runGold(t, cat)
	day1 := int32(d1.Unix() / 86400)
	hour1 := d1.Truncate(time.Hour).UnixMicro()
	wantDaily := []tables.SourceDaily{{Day: day1, Source: "ft", Events: 1}, {Day: day1, Source: "news", Events: 2}}
	wantTerms := []tables.TrendingTerm{{Hour: hour1, Rank: 1, Term: "bond", Mentions: 3}, {Hour: hour1, Rank: 2, Term: "default", Mentions: 1}}
	sort.Slice(wantTerms, func(i, j int) bool { return fmt.Sprint(wantTerms[i]) < fmt.Sprint(wantTerms[j]) })
	daily, terms := goldRows(t, cat)
	if diff := cmp.Diff(wantDaily, daily); diff != "" {
		t.Fatalf("daily (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTerms, terms); diff != "" {
		t.Fatalf("terms (-want +got):\n%s", diff)
	}

	runGold(t, cat) // nothing new: nothing changes
	daily2, terms2 := goldRows(t, cat)
	if diff := cmp.Diff(daily, daily2); diff != "" || !cmp.Equal(terms, terms2) {
		t.Fatalf("a rerun changed gold:\n%s", diff)
	}

	produce(ev("news", "Bond auction", d1.Add(3*time.Minute)), ev("news", "Rates steady", d2))
	runGold(t, cat)
	wantDaily = []tables.SourceDaily{{Day: day1, Source: "ft", Events: 1}, {Day: day1, Source: "news", Events: 3}, {Day: day1 + 1, Source: "news", Events: 1}}
	daily3, _ := goldRows(t, cat)
	if diff := cmp.Diff(wantDaily, daily3); diff != "" {
		t.Fatalf("daily after new events (-want +got):\n%s", diff)
	}
}
