// Package monitoring holds HAADE's alert rules, the PrometheusRules in this
// folder, and their tests.
package monitoring

import (
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// RuleFiles are the PrometheusRules in this folder.
var RuleFiles = []string{"prometheusrule.yaml", "flink-prometheusrule.yaml"}

// RuleGroups reads the PrometheusRules of RuleFiles in dir (this folder) and
// returns their rule groups as one plain Prometheus rules file, as the
// Prometheus operator hands them to Prometheus, and as promtool takes them.
func RuleGroups(dir string) ([]byte, error) {
	var rules struct {
		Groups []any `yaml:"groups"`
	}
	for _, f := range RuleFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		var pr struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Groups []any `yaml:"groups"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &pr); err != nil || pr.Kind != "PrometheusRule" {
			return nil, fmt.Errorf("%s: not a PrometheusRule (%v)", f, err)
		}
		rules.Groups = append(rules.Groups, pr.Spec.Groups...)
	}
	return yaml.Marshal(rules)
}
