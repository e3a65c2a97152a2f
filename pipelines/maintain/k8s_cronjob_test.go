package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The CronJob's arguments and environment (bronze's ConfigMap, the catalog
// URI built from the Secrets) parse with the real flag set, so a renamed
// flag fails here, not in the cluster.
func TestK8sCronJobParses(t *testing.T) {
	b, err := os.ReadFile("../../k8s/base/maintain-cronjob.yaml")
	if os.IsNotExist(err) {
		t.Skip("no k8s/base/maintain-cronjob.yaml")
	}
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Kind string
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Command []string
								Args    []string
								EnvFrom []struct {
									ConfigMapRef struct{ Name string } `yaml:"configMapRef"`
								} `yaml:"envFrom"`
								Env []struct {
									Name  string
									Value string
								}
							}
						}
					}
				}
			} `yaml:"jobTemplate"`
		}
	}
	if err := yaml.NewDecoder(strings.NewReader(string(b))).Decode(&cj); err != nil {
		t.Fatal(err)
	}
	ctrs := cj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if cj.Kind != "CronJob" || len(ctrs) != 1 || len(ctrs[0].Command) != 1 || ctrs[0].Command[0] != "/opt/haade/maintain" {
		t.Fatalf("not the maintain CronJob: %+v", cj)
	}
	ctr := ctrs[0]
	env := map[string]string{}
	for _, from := range ctr.EnvFrom {
		cm, err := os.ReadFile("../../k8s/base/lakehouse/" + from.ConfigMapRef.Name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Data map[string]string }
		if err := yaml.Unmarshal(cm, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range m.Data {
			env[k] = v
		}
	}
	ref := regexp.MustCompile(`\$\((\w+)\)`)
	for _, e := range ctr.Env {
		if e.Value == "" { // from a Secret
			env[e.Name] = "secret"
			continue
		}
		env[e.Name] = ref.ReplaceAllStringFunc(e.Value, func(s string) string { return env[s[2:len(s)-1]] })
	}
	cfg, err := parseArgs(ctr.Args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the CronJob's command line does not parse: %v", err)
	}
	if !strings.HasPrefix(cfg.Catalog.URI, "postgres://") || cfg.Catalog.Warehouse != "s3://warehouse/" || cfg.Catalog.S3Endpoint == "" ||
		cfg.LogFormat != "json" || len(cfg.Tables) != 2 {
		t.Fatalf("config %+v", cfg)
	}
}
