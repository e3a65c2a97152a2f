//go:build cluster

package k8se2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/haade/haade/testing/chart"
	"github.com/haade/haade/testing/cmdtest"
)

// grafanaDashboard is what the test reads of k8s/monitoring/dashboard.json,
// the dashboard users import into their Grafana.
type grafanaDashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Title       string `json:"title"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

// grafanaUnits are the Grafana units dashboard.json uses, as the axes say them.
var grafanaUnits = map[string]string{"ops": "/s", "s": "s", "bytes": "B", "short": ""}

var legendLabel = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// legend expands a Grafana legend format ("p99 {{table}}") with a series' labels.
func legend(format string, m model.Metric) string {
	if format == "" {
		return m.String()
	}
	return legendLabel.ReplaceAllStringFunc(format, func(s string) string {
		return string(m[model.LabelName(legendLabel.FindStringSubmatch(s)[1])])
	})
}

// dashboard draws every panel of k8s/monitoring/dashboard.json from the node's
// Prometheus over [from, to], each query as Grafana would run it (query_range,
// one point per 15 s), into a PNG at path. It returns the titles of the panels
// that had no data.
func (p prom) dashboard(path string, from, to time.Time) (empty []string) {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(p.t), "k8s/monitoring/dashboard.json"))
	if err != nil {
		p.t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		p.t.Fatalf("dashboard.json: %v", err)
	}
	api, err := p.api()
	if err != nil {
		p.t.Fatal(err)
	}
	var panels []chart.Panel
	for _, dp := range d.Panels {
		unit, ok := grafanaUnits[dp.FieldConfig.Defaults.Unit]
		if !ok {
			unit = dp.FieldConfig.Defaults.Unit
		}
		cp := chart.Panel{Title: dp.Title, Unit: unit, XUnit: "min", XMax: to.Sub(from).Minutes()}
		points := 0
		for _, tg := range dp.Targets {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			v, _, _, err := api.QueryRange(ctx, tg.Expr, promv1.Range{Start: from, End: to, Step: 15 * time.Second})
			cancel()
			if err != nil {
				p.t.Fatalf("panel %q: %s: %v", dp.Title, tg.Expr, err)
			}
			m, ok := v.(model.Matrix)
			if !ok {
				p.t.Fatalf("panel %q: %s: a %s, not a matrix", dp.Title, tg.Expr, v.Type())
			}
			sort.Slice(m, func(i, j int) bool { return m[i].Metric.String() < m[j].Metric.String() })
			for _, s := range m {
				l := chart.Line{Label: legend(tg.LegendFormat, s.Metric)}
				for i, smp := range s.Values {
					x := smp.Timestamp.Time().Sub(from).Minutes()
					// No sample for a step: a gap, as Grafana draws it, not a
					// line across the time the series was gone.
					if i > 0 && smp.Timestamp.Sub(s.Values[i-1].Timestamp) > 15*time.Second*3/2 {
						l.Points = append(l.Points, chart.Point{X: x, Y: math.NaN()})
					}
					y := float64(smp.Value)
					if !math.IsNaN(y) {
						points++
					}
					l.Points = append(l.Points, chart.Point{X: x, Y: y})
				}
				cp.Lines = append(cp.Lines, l)
			}
		}
		if points == 0 {
			empty = append(empty, dp.Title)
		}
		panels = append(panels, cp)
	}
	sub := fmt.Sprintf("TestClusterBronze, from the node's Prometheus (15 s steps), %s to %s UTC",
		from.UTC().Format("2006-01-02 15:04"), to.UTC().Format("15:04"))
	if err := chart.Save(path, chart.Lines(d.Title+" (k8s/monitoring/dashboard.json)", sub, 2, panels)); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("drew the dashboard's %d panels into %s (no data: %v)", len(panels), path, empty)
	// What explains the panels' gaps: the scrapes of each worker, and how
	// many samples each lag series has over the run.
	span := fmt.Sprintf("[%ds]", int(to.Sub(from).Seconds())+1)
	for _, q := range []string{
		`count_over_time(up{job="lakehouse/bronze"}` + span + `)`,
		`sum_over_time(up{job="lakehouse/bronze"}` + span + `)`,
		`max_over_time(scrape_duration_seconds{job="lakehouse/bronze"}` + span + `)`,
		`count_over_time(haade_kafka_consumer_lag` + span + `)`,
		`count_over_time(haade_seconds_since_last_commit` + span + `)`,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		v, _, _, err := api.Query(ctx, q, to)
		cancel()
		vec, _ := v.(model.Vector)
		if err != nil || len(vec) == 0 {
			p.t.Logf("scrapes over the run: %s: nothing (%v)", q, err)
		}
		for _, smp := range vec {
			p.t.Logf("scrapes over the run: %s: %v %s", q, smp.Value, smp.Metric)
		}
	}
	return empty
}
