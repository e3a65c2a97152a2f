//go:build e2e

package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/cmdtest"
)

const supersetURL = "http://127.0.0.1:8088"

// TestSuperset starts Superset, provisions the dashboard from the
// repository over the tables TestTrinoReadsTheLayers wrote (it writes them
// itself when run alone), checks that every chart's figures, through
// /api/v1/chart/data, are Trino's, and photographs the dashboard with
// headless Chromium: a page error or an empty chart fails the test.
// HAADE_SCREENSHOT=path keeps the picture there (.ci/trino writes
// docs/superset.png).
func TestSuperset(t *testing.T) {
	ctx := context.Background()
	tr := newTrino(trinoURL, "iceberg", namespace)
	if n, err := tr.count(ctx, "bronze_events"); err != nil || n == 0 {
		t.Logf("no %s.bronze_events yet (%v): writing the layers", namespace, err)
		l := newLake(t, "")
		var s sample
		produce(t, l.topic, 2000, 0, &s)
		l.runBronze()
		l.runSilver()
		l.runGold()
	}
	_, err := cmdtest.Script(repoRoot, nil, "superset", "status")
	wasRunning := err == nil
	start := time.Now()
	mustScript(t, "superset", "start")
	t.Logf("superset.sh start: %v", time.Since(start).Round(100*time.Millisecond))
	if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
		t.Cleanup(func() { _, _ = cmdtest.Script(repoRoot, nil, "superset", "stop") })
	}
	idsFile := filepath.Join(t.TempDir(), "ids.json")
	start = time.Now()
	mustScript(t, "superset", "provision", "--catalog", "iceberg", "--schema", namespace, "--out", idsFile)
	t.Logf("superset.sh provision: %v", time.Since(start).Round(100*time.Millisecond))
	var ids struct {
		Dashboard int            `json:"dashboard"`
		Slug      string         `json:"slug"`
		Charts    map[string]int `json:"charts"`
	}
	b, err := os.ReadFile(idsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatal(err)
	}
	if len(ids.Charts) != 5 {
		t.Fatalf("provisioned %d charts, want 5: %v", len(ids.Charts), ids.Charts)
	}
	ss := loginSuperset(t)

	// Each chart against the same figure computed by Trino directly.
	// The hours as Superset's JSON gives them: epoch milliseconds.
	hour := "to_unixtime(CAST(date_trunc('hour', ingested_at) AS timestamp(6))) * 1000"
	checks := []struct {
		chart string
		keys  []string
		value string
		trino string
	}{
		{"Bronze rows per hour", []string{"hour"}, "rows", "SELECT " + hour + ", count(*) FROM bronze_events GROUP BY 1"},
		{"Dead letters per hour by reason", []string{"hour", "reason"}, "dead letters",
			"SELECT " + hour + ", split_part(error, ':', 1), count(*) FROM bronze_events_dlq GROUP BY 1, 2"},
		{"Events per source per day (gold)", []string{"day", "source"}, "events",
			"SELECT to_unixtime(CAST(day AS timestamp(6))) * 1000, source, sum(events) FROM gold_source_daily GROUP BY 1, 2"},
		{"Trending terms (gold)", []string{"term"}, "mentions", "SELECT term, sum(mentions) FROM gold_trending_terms GROUP BY 1"},
		{"Silver rejects by reason", []string{"reason"}, "rejects", "SELECT reason, count(*) FROM silver_rejects GROUP BY 1"},
	}
	for _, c := range checks {
		t.Run(c.chart, func(t *testing.T) {
			id, ok := ids.Charts[c.chart]
			if !ok {
				t.Fatalf("no chart %q among %v", c.chart, ids.Charts)
			}
			got := ss.chartData(t, id, c.keys, c.value)
			if len(got) == 0 {
				t.Fatalf("chart %q returned no rows", c.chart)
			}
			r, err := tr.query(ctx, c.trino)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{}
			for _, row := range r.Rows {
				var k []string
				for _, v := range row[:len(row)-1] {
					k = append(k, keyString(v))
				}
				f, _ := row[len(row)-1].(json.Number).Float64()
				want[strings.Join(k, "|")] = f
			}
			if c.chart == "Trending terms (gold)" {
				// The chart keeps the top 15: each of them must carry Trino's sum.
				for k, v := range got {
					if want[k] != v {
						t.Errorf("term %q: %v mentions in Superset, %v in Trino", k, v, want[k])
					}
				}
				if n := min(15, len(want)); len(got) != n {
					t.Errorf("%d terms in the chart, want %d", len(got), n)
				}
				return
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("chart %q: Superset's /api/v1/chart/data differs from Trino (-trino +superset):\n%s", c.chart, d)
			}
		})
	}

	t.Run("screenshot", func(t *testing.T) {
		out := os.Getenv("HAADE_SCREENSHOT")
		if out == "" {
			out = filepath.Join(t.TempDir(), "superset.png")
		} else if !filepath.IsAbs(out) {
			out = filepath.Join(repoRoot, out)
		}
		start := time.Now()
		cmd := exec.Command("bash", filepath.Join(repoRoot, "testing/services/superset.sh"), "screenshot",
			"--dashboard", ids.Slug, "--out", out, "--charts", "5")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			t.Fatalf("superset.sh screenshot: %v\n%s", err, cmdtest.Tail(buf.String(), 30))
		}
		st, err := os.Stat(out)
		if err != nil || st.Size() < 20_000 {
			t.Fatalf("screenshot %s: %v, %d bytes", out, err, st.Size())
		}
		t.Logf("screenshot %s (%d KB) in %v: %s", out, st.Size()/1024, time.Since(start).Round(100*time.Millisecond), cmdtest.Tail(buf.String(), 3))
	})
}

// keyString writes a chart or Trino key value the same way from both
// sides: numbers (epoch milliseconds) as integers, text as itself.
func keyString(v any) string {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return fmt.Sprint(int64(math.Round(f)))
	case float64:
		return fmt.Sprint(int64(math.Round(x)))
	case nil:
		return "<null>"
	default:
		return fmt.Sprint(x)
	}
}

type supersetSession struct {
	token string
	http  *http.Client
}

func loginSuperset(t *testing.T) *supersetSession {
	t.Helper()
	s := &supersetSession{http: &http.Client{Timeout: 2 * time.Minute}}
	var res struct {
		AccessToken string `json:"access_token"`
	}
	s.do(t, http.MethodPost, "/api/v1/security/login",
		map[string]any{"username": "admin", "password": "admin", "provider": "db", "refresh": false}, &res)
	if res.AccessToken == "" {
		t.Fatal("Superset's login gave no access token")
	}
	s.token = res.AccessToken
	return s
}

func (s *supersetSession) do(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, supersetURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Superset %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("Superset %s %s: %v", method, path, err)
	}
}

// chartData posts the chart's saved query context to /api/v1/chart/data
// and returns its rows as key -> value.
func (s *supersetSession) chartData(t *testing.T, id int, keys []string, value string) map[string]float64 {
	t.Helper()
	var chart struct {
		Result struct {
			QueryContext string `json:"query_context"`
		} `json:"result"`
	}
	s.do(t, http.MethodGet, fmt.Sprintf("/api/v1/chart/%d", id), nil, &chart)
	var qc map[string]any
	if err := json.Unmarshal([]byte(chart.Result.QueryContext), &qc); err != nil {
		t.Fatalf("chart %d: query context %q: %v", id, chart.Result.QueryContext, err)
	}
	var data struct {
		Result []struct {
			Data  []map[string]any `json:"data"`
			Error *string          `json:"error"`
		} `json:"result"`
	}
	s.do(t, http.MethodPost, "/api/v1/chart/data", qc, &data)
	if len(data.Result) != 1 || data.Result[0].Error != nil {
		t.Fatalf("chart %d: %d results, error %v", id, len(data.Result), data.Result)
	}
	out := map[string]float64{}
	for _, row := range data.Result[0].Data {
		var k []string
		for _, c := range keys {
			k = append(k, keyString(row[c]))
		}
		f, err := row[value].(json.Number).Float64()
		if err != nil {
			t.Fatalf("chart %d: row %v: no number %q", id, row, value)
		}
		out[strings.Join(k, "|")] = f
	}
	return out
}
