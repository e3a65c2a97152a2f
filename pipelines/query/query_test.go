package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
)

// qRow has a column of each kind that head formats differently.
type qRow struct {
	Key     string  `iceberg:"key,required"`
	Note    *string `iceberg:"note"`
	Payload []byte  `iceberg:"payload"`
	At      int64   `iceberg:"at,required,timestamptz"`
	N       int64   `iceberg:"n,required"`
	Score   float64 `iceberg:"score"`
}

func ptr(s string) *string { return &s }

var at = time.Date(2026, 5, 19, 10, 0, 0, 123456000, time.UTC).UnixMicro()

var sample = []qRow{
	{Key: "a", Note: ptr("plain note"), Payload: []byte(`{"x":1}`), At: at, N: 1, Score: 0.5},
	{Key: "b", Note: nil, Payload: nil, At: at + 1_000_000, N: 22, Score: -2},
	{Key: "c", Note: ptr("tab\there"), Payload: []byte{0, 0xff, '"'}, At: at + 3_600_000_000, N: 333, Score: 1e6},
	{Key: "d", Note: ptr("a note far too long to fit"), Payload: []byte{}, At: at, N: -4, Score: 0},
}

// lakehouse makes a temporary catalog with:
//   - lakehouse.events: two appends, the second with haade summary keys,
//     and a haade progress property;
//   - lakehouse.rows: one append of sample, for the golden head;
//   - the empty namespace "empty" and the nested one outer.inner.
func lakehouse(t *testing.T) icebergio.CatalogConfig {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := icebergio.CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	cat, err := cfg.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCat(cat)
	appendRows := func(ident string, rows []qRow, props iceberg.Properties) {
		t.Helper()
		tbl, err := icebergio.EnsureTable(ctx, cat, tables.Table{Ident: ident, Row: qRow{}})
		if err != nil {
			t.Fatal(err)
		}
		icebergtest.Append(t, tbl, rows, props)
	}
	appendRows("lakehouse.events", sample[:2], nil)
	appendRows("lakehouse.events", sample[2:], iceberg.Properties{
		icebergio.SummaryPipeline: "bronze", icebergio.SummaryWindowEnd: "2026-05-19T10:00:10Z",
		icebergio.SummaryOffsets: `{"fintech.debt.raw":{"0":4}}`,
	})
	appendRows("lakehouse.rows", sample, nil)
	tbl, err := cat.LoadTable(ctx, table.Identifier{"lakehouse", "events"})
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{icebergio.ProgressProperty("bronze"): `{"offsets":{},"at":0}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []table.Identifier{{"empty"}, {"outer"}, {"outer", "inner"}} {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func closeCat(cat catalog.Catalog) {
	if c, ok := cat.(catalog.Closer); ok {
		_ = c.Close()
	}
}

// runQuery runs the command against cfg's catalog.
func runQuery(t *testing.T, cfg icebergio.CatalogConfig, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	all := append([]string{"--catalog-uri=" + cfg.URI, "--warehouse=" + cfg.Warehouse}, args...)
	code := run(context.Background(), all, func(string) string { return "" }, &out, &errb)
	return code, out.String(), errb.String()
}

func mustQuery(t *testing.T, cfg icebergio.CatalogConfig, args ...string) string {
	t.Helper()
	code, out, errs := runQuery(t, cfg, args...)
	if code != 0 {
		t.Fatalf("query %v: exit %d: %s", args, code, errs)
	}
	return out
}

// masks replaces what changes from run to run: times, ids, paths.
var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`file://\S+`), "LOCATION"},
	{regexp.MustCompile(`\b\d{12,}\b`), "ID"},
}

func mask(s string) string {
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

func TestTables(t *testing.T) {
	cfg := lakehouse(t)
	// Cells are compared with their spacing folded, as times and paths vary.
	fold := regexp.MustCompile(` {2,}`)
	rule := regexp.MustCompile(`-+`)
	got := rule.ReplaceAllString(fold.ReplaceAllString(mask(mustQuery(t, cfg, "tables")), " | "), "-")
	want := `NAMESPACE | TABLE | SNAPSHOTS | ROWS | DATA FILES | LAST COMMIT (UTC) | LOCATION
- | - | - | - | - | - | -
empty | (no tables)
lakehouse | events | 2 | 4 | 2 | TIME | LOCATION
lakehouse | rows | 1 | 4 | 1 | TIME | LOCATION
outer | (no tables)
outer.inner | (no tables)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	// Columns are aligned: every cell of a column starts where its header does.
	lines := strings.Split(mustQuery(t, cfg, "tables"), "\n")
	col := strings.Index(lines[0], "ROWS")
	for _, l := range lines[3:5] {
		if l[col:col+2] != "4 " {
			t.Errorf("ROWS not aligned in %q", l)
		}
	}
}

func TestSnapshots(t *testing.T) {
	cfg := lakehouse(t)
	got := mask(mustQuery(t, cfg, "snapshots", "lakehouse.events"))
	wantLines := []string{
		"lakehouse.events: 2 snapshots, location LOCATION",
		"snapshot ID  TIME  append  parent none  seq 1",
		"    added-records           2",
		"snapshot ID  TIME  append  parent ID  seq 2  (current)",
		`  * haade.kafka.offsets     {"fintech.debt.raw":{"0":4}}`,
		"  * haade.pipeline          bronze",
		"  * haade.window-end        TIME",
		"    added-records           2",
		"    total-records           4",
		"table properties",
		`  * haade.progress.bronze  {"offsets":{},"at":0}`,
	}
	// The lines come in this order.
	rest := got
	for _, w := range wantLines {
		i := strings.Index(rest, w+"\n")
		if i < 0 {
			t.Fatalf("missing line %q (or out of order) in:\n%s", w, got)
		}
		rest = rest[i+len(w):]
	}
	// haade keys come first in each summary.
	cur := got[strings.Index(got, "(current)"):]
	if strings.Index(cur, "haade.window-end") > strings.Index(cur, "added-data-files") {
		t.Errorf("haade keys not first:\n%s", cur)
	}
	// --color=always highlights them.
	colored := mustQuery(t, cfg, "snapshots", "lakehouse.events", "--color=always")
	if !strings.Contains(colored, "  * \x1b[1;33mhaade.pipeline          bronze\x1b[0m\n") {
		t.Errorf("no highlight in:\n%q", colored)
	}
	if strings.Contains(got, "\x1b[") {
		t.Errorf("escapes when not a terminal")
	}
}

func TestCount(t *testing.T) {
	cfg := lakehouse(t)
	for ident, want := range map[string]string{"lakehouse.events": "4\n", "lakehouse.rows": "4\n"} {
		if got := mustQuery(t, cfg, "count", ident); got != want {
			t.Errorf("count %s = %q, want %q", ident, got, want)
		}
	}
}

func TestHead(t *testing.T) {
	cfg := lakehouse(t)
	got := mustQuery(t, cfg, "head", "lakehouse.rows", "--width=14")
	want := `key  note            payload       at              n    score
---  --------------  ------------  --------------  ---  -----
a    plain note      "{\"x\":1}"   2026-05-19T10…  1    0.5
b    NULL            NULL          2026-05-19T10…  22   -2
c    tab\there       "\x00\xff\""  2026-05-19T11…  333  1e+06
d    a note far to…  ""            2026-05-19T10…  -4   0
(4 of 4 rows)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("head --width=14 (-want +got):\n%s", diff)
	}
	// Flags may follow the table; timestamps are RFC 3339 UTC in full.
	got = mustQuery(t, cfg, "head", "lakehouse.rows", "-n", "2")
	want = `key  note        payload      at                           n   score
---  ----------  -----------  ---------------------------  --  -----
a    plain note  "{\"x\":1}"  2026-05-19T10:00:00.123456Z  1   0.5
b    NULL        NULL         2026-05-19T10:00:01.123456Z  22  -2
(2 of 4 rows)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("head -n 2 (-want +got):\n%s", diff)
	}
	if got := mustQuery(t, cfg, "-n", "0", "head", "lakehouse.rows"); !strings.HasSuffix(got, "(0 of 4 rows)\n") {
		t.Errorf("head -n 0:\n%s", got)
	}
}

// Bad arguments are one error line, exit 2; a missing table or catalog
// says so.
func TestBadArguments(t *testing.T) {
	cfg := lakehouse(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no command", nil, 2, "no command"},
		{"unknown command", []string{"drop", "lakehouse.rows"}, 2, `unknown command "drop"`},
		{"head without table", []string{"head"}, 2, "head: want a TABLE"},
		{"tables with an argument", []string{"tables", "lakehouse"}, 2, `unexpected argument "lakehouse"`},
		{"two tables", []string{"count", "lakehouse.rows", "lakehouse.events"}, 2, `unexpected argument "lakehouse.events"`},
		{"table without namespace", []string{"count", "rows"}, 2, "want namespace.table"},
		{"negative n", []string{"head", "lakehouse.rows", "-n", "-1"}, 2, "-n=-1"},
		{"tiny width", []string{"head", "lakehouse.rows", "--width=2"}, 2, "--width=2"},
		{"bad color", []string{"tables", "--color=pink"}, 2, "--color"},
		{"unknown flag", []string{"tables", "--limit=3"}, 2, "unknown flag --limit"},
		{"n not a number", []string{"head", "lakehouse.rows", "-n", "many"}, 2, "-n"},
		{"no such table", []string{"head", "lakehouse.nope"}, 1, "no table lakehouse.nope"},
		{"no such namespace", []string{"snapshots", "other.rows"}, 1, "no table other.rows"},
		{"no catalog", []string{"tables", "--catalog-uri=" + t.TempDir() + "/none.db"}, 2, "--catalog-uri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runQuery(t, cfg, tc.args...)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != tc.code || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "query") || !strings.Contains(lines[0], tc.msg) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit %d and one line with %q", code, out, errs, tc.code, tc.msg)
			}
		})
	}
	// The default catalog is not created where there is none.
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"tables", "--catalog-uri=" + dir + "/lakehouse/catalog.db"}, func(string) string { return "" }, &out, &errb); code != 2 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if m, _ := filepath.Glob(dir + "/lakehouse/*"); len(m) != 0 {
		t.Fatalf("query created %v", m)
	}
}

// HAADE_<FLAG> sets flags; the command line wins.
func TestEnv(t *testing.T) {
	cfg := lakehouse(t)
	env := map[string]string{"HAADE_CATALOG_URI": cfg.URI, "HAADE_WAREHOUSE": cfg.Warehouse, "HAADE_N": "1"}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"head", "lakehouse.rows"}, func(k string) string { return env[k] }, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasSuffix(out.String(), "(1 of 4 rows)\n") {
		t.Fatalf("HAADE_N=1:\n%s", out.String())
	}
}
