package obs

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/transforms/parse"
	"gopkg.in/yaml.v3"
)

// The collectors that the commands register.
func init() {
	MustRegister(kafkaio.Collectors()...)
	MustRegister(parse.Collectors()...)
	MustRegister(icebergio.Collectors()...)
}

var metricRef = regexp.MustCompile(`\bhaade_[a-z0-9_]+`)

func knownMetrics() map[string]bool {
	known := map[string]bool{}
	for _, n := range MetricNames() {
		known[n] = true
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			known[n+s] = true
		}
	}
	return known
}

// Every metric that the alert rules reference exists.
func TestAlertRulesReferenceRealMetrics(t *testing.T) {
	b, err := os.ReadFile("../../k8s/monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Groups []struct {
				Name  string `yaml:"name"`
				Rules []struct {
					Alert string `yaml:"alert"`
					Expr  string `yaml:"expr"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &rule); err != nil {
		t.Fatal(err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Fatalf("not a PrometheusRule: %s %s", rule.APIVersion, rule.Kind)
	}
	known := knownMetrics()
	alerts := map[string]bool{}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			refs := metricRef.FindAllString(r.Expr, -1)
			if len(refs) == 0 {
				t.Errorf("alert %s references no haade metric: %s", r.Alert, r.Expr)
			}
			for _, m := range refs {
				if !known[m] {
					t.Errorf("alert %s references unknown metric %s", r.Alert, m)
				}
			}
		}
	}
	for _, want := range []string{"HaadeNoCommit", "HaadeDeadLetterRateHigh", "HaadeLagGrowing", "HaadeCommitRetriesClimbing"} {
		if !alerts[want] {
			t.Errorf("alert %s missing", want)
		}
	}
}

// Every metric that the dashboard plots exists, and the panels the issue
// names are there.
func TestDashboardReferencesRealMetrics(t *testing.T) {
	b, err := os.ReadFile("../../k8s/monitoring/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	known := knownMetrics()
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, strings.ToLower(p.Title))
		for _, tg := range p.Targets {
			for _, m := range metricRef.FindAllString(tg.Expr, -1) {
				if !known[m] {
					t.Errorf("panel %q references unknown metric %s", p.Title, m)
				}
			}
		}
	}
	all := strings.Join(titles, "|")
	for _, want := range []string{"throughput", "lag", "freshness", "commit latency", "dead letters"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel about %s in %v", want, titles)
		}
	}
}
