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
	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/tables"
)

var bronzeBin string

// TestMain builds the real bronze pipeline: silver runs over tables that
// bronze made.
func TestMain(m *testing.M) {
	bins, done := cmdtest.BuildTemp("../bronze")
	bronzeBin = bins[0]
	code := ptest.MainRetWithDefault(m, "prism")
	done()
	os.Exit(code)
}

type lake struct {
	t       *testing.T
	kafka   *embedded.Cluster
	catalog icebergio.CatalogConfig
}

func newLake(t *testing.T) *lake {
	t.Helper()
	k, err := kafkatest.Start("fintech.debt.raw", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	dir := t.TempDir()
	return &lake{t: t, kafka: k, catalog: icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}}
}

func (l *lake) bronze(values ...string) {
	l.t.Helper()
	var vs [][]byte
	for _, v := range values {
		vs = append(vs, []byte(v))
	}
	if err := kafkatest.Produce(context.Background(), l.kafka.Brokers(), "fintech.debt.raw", vs); err != nil {
		l.t.Fatal(err)
	}
	cmd := exec.Command(bronzeBin, "--brokers="+l.kafka.Brokers()[0], "--bounded", "--metrics-addr=", "--commit-interval=1s",
		"--catalog-uri="+l.catalog.URI, "--warehouse="+l.catalog.Warehouse)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("bronze: %v\n%s", err, out)
	}
}

func (l *lake) silver() {
	l.t.Helper()
	cfg, err := func() (Config, error) {
		fs := runners.NewFlagSet("silver")
		mk := flags(fs)
		if err := flagenv.Parse(fs, []string{"--bounded", "--commit-interval=1s", "--catalog-uri=" + l.catalog.URI, "--warehouse=" + l.catalog.Warehouse}, func(string) string { return "" }); err != nil {
			return Config{}, err
		}
		return mk()
	}()
	if err != nil {
		l.t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := build(context.Background(), s, cfg); err != nil {
		l.t.Fatal(err)
	}
	if _, err := runners.Run(context.Background(), "direct", p); err != nil {
		l.t.Fatal(err)
	}
}

type row struct{ Source, Title, TS string }

func (l *lake) silverRows() ([]row, []string) {
	l.t.Helper()
	var evs []tables.SilverEvent
	var rejects []tables.SilverReject
	if err := icebergio.ScanRows(context.Background(), l.catalog, "lakehouse.silver_events", &evs); err != nil {
		l.t.Fatal(err)
	}
	if err := icebergio.ScanRows(context.Background(), l.catalog, "lakehouse.silver_rejects", &rejects); err != nil {
		l.t.Fatal(err)
	}
	var rows []row
	for _, e := range evs {
		rows = append(rows, row{e.Source, e.Title, fmt.Sprint(e.Timestamp)})
	}
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
	var reasons []string
	for _, r := range rejects {
		reasons = append(reasons, r.Reason)
	}
	sort.Strings(reasons)
	return rows, reasons
}

const ts1, ts2, ts3 = "2026-05-19T10:00:00Z", "2026-05-19T11:00:00Z", "2026-05-20T09:30:00+02:00"

func ev(src, title, ts string) string {
	return fmt.Sprintf(`{"source": %q, "title": %q, "timestamp": %q}`, src, title, ts)
}

// Silver runs end to end over tables the bronze pipeline made: it cleans,
// rejects, and deduplicates; a rerun changes nothing; new bronze rows,
// duplicates of old ones included, add only what is new.
func TestSilverOverBronze(t *testing.T) {
	l := newLake(t)
	l.bronze(
		ev("Reuters", "Debt  market update", ts1),
		ev(" reuters ", "Debt market update ", ts1), // a duplicate once cleaned
		ev("Central Bank", "Rate cut", ts2),
		`{"source": null, "title": "No source", "timestamp": "2026-05-19T12:00:00Z"}`,
		`{"source": "FT", "title": "   ", "timestamp": "2026-05-19T12:00:00Z"}`,
		`not json at all`, // a bronze dead letter: never reaches silver
	)
	l.silver()
	want := []row{
		{"central-bank", "Rate cut", "1779188400000000"},
		{"reuters", "Debt market update", "1779184800000000"},
	}
	rows, reasons := l.silverRows()
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("silver rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"missing source", "missing title"}, reasons); diff != "" {
		t.Fatalf("rejects (-want +got):\n%s", diff)
	}

	// A rerun with nothing new in bronze changes nothing.
	l.silver()
	rows2, reasons2 := l.silverRows()
	if diff := cmp.Diff(rows, rows2); diff != "" || len(reasons2) != len(reasons) {
		t.Fatalf("a rerun changed silver (-before +after):\n%s %v", diff, reasons2)
	}

	// New bronze rows: one new event, a late duplicate of an old one.
	l.bronze(ev("bloomberg", "Treasury yield spike", ts3), ev("REUTERS", "Debt market update", ts1))
	l.silver()
	rows3, _ := l.silverRows()
	want = append(want, row{"bloomberg", "Treasury yield spike", "1779262200000000"})
	sort.Slice(want, func(i, j int) bool { return fmt.Sprint(want[i]) < fmt.Sprint(want[j]) })
	if diff := cmp.Diff(want, rows3); diff != "" {
		t.Fatalf("after new bronze rows (-want +got):\n%s", diff)
	}
}

// An unbounded silver run polls bronze for new snapshots, and stops
// cleanly on runners.Stop with everything it read committed once.
func TestSilverStreaming(t *testing.T) {
	l := newLake(t)
	l.bronze(ev("Reuters", "First", ts1), ev("FT", "Second", ts2))
	fs := runners.NewFlagSet("silver")
	mk := flags(fs)
	if err := flagenv.Parse(fs, []string{"--poll=200ms", "--commit-interval=1s", "--catalog-uri=" + l.catalog.URI,
		"--warehouse=" + l.catalog.Warehouse}, func(string) string { return "" }); err != nil {
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
	done := make(chan error, 1)
	go func() {
		_, err := runners.Run(context.Background(), "direct", p)
		done <- err
	}()
	waitRows := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			rows, _ := l.silverRows()
			if len(rows) == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("silver has %d rows, want %d", len(rows), n)
			}
			select {
			case err := <-done:
				t.Fatalf("the streaming run ended early: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	waitRows(2)
	l.bronze(ev("bloomberg", "Third", ts3), ev("reuters", "First", ts1)) // one new, one duplicate
	waitRows(3)
	runners.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not stop within 60s of runners.Stop")
	}
	rows, _ := l.silverRows()
	want := []row{{"bloomberg", "Third", "1779262200000000"}, {"ft", "Second", "1779188400000000"}, {"reuters", "First", "1779184800000000"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
