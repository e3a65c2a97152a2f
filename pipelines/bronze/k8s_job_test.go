package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/flagenv"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners"
	"gopkg.in/yaml.v3"
)

// The Kubernetes submit Job (k8s/base/lakehouse/bronze-submit-job.yaml)
// runs this binary with runner flags as arguments and the docs/DESIGN.md flags
// as HAADE_* variables. This test feeds exactly that command line and
// environment to the real flag set, so a renamed flag or a value the
// pipeline would reject fails here rather than in a cluster.

// k8sObject is the part of a Kubernetes object this test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			ConfigMapKeyRef *struct{ Name, Key string } `yaml:"configMapKeyRef"`
			SecretKeyRef    *struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

// loadK8sBase reads every object under k8s/base.
func loadK8sBase(t *testing.T) []k8sObject {
	t.Helper()
	var objs []k8sObject
	root := filepath.Join("..", "..", "k8s", "base")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			objs = append(objs, o)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

var k8sVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// containerEnv builds the container's environment as the kubelet would:
// envFrom first, then env in order with $(VAR) expanded. Secret values are
// placeholders (URL-safe, as the overlays' are).
func containerEnv(t *testing.T, c k8sContainer, configMaps map[string]map[string]string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, ok := configMaps[ef.ConfigMapRef.Name]
			if !ok {
				t.Fatalf("envFrom: no ConfigMap %s in k8s/base", ef.ConfigMapRef.Name)
			}
			for k, v := range cm {
				env[k] = v
			}
		case ef.SecretRef != nil:
			t.Fatalf("envFrom Secret %s: its keys are unknown here; list them under env", ef.SecretRef.Name)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = k8sVarRef.ReplaceAllStringFunc(e.Value, func(m string) string {
				v, ok := env[m[2:len(m)-1]]
				if !ok {
					t.Errorf("env %s: %s is not defined before it", e.Name, m)
					return m
				}
				return v
			})
		case e.ValueFrom.ConfigMapKeyRef != nil:
			r := e.ValueFrom.ConfigMapKeyRef
			v, ok := configMaps[r.Name][r.Key]
			if !ok {
				t.Fatalf("env %s: ConfigMap %s has no key %s", e.Name, r.Name, r.Key)
			}
			env[e.Name] = v
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "placeholder-" + strings.ToLower(strings.ReplaceAll(e.Name, "_", "-"))
		}
	}
	return env
}

// keepFlags restores every process-wide flag that a parse changes (Beam's
// --environment_type and the like), so later tests run as before.
func keepFlags(t *testing.T) {
	saved := map[string]string{}
	flag.CommandLine.VisitAll(func(f *flag.Flag) { saved[f.Name] = f.Value.String() })
	t.Cleanup(func() {
		flag.CommandLine.VisitAll(func(f *flag.Flag) {
			if v := saved[f.Name]; f.Value.String() != v {
				if err := f.Value.Set(v); err != nil {
					t.Errorf("restore --%s: %v", f.Name, err)
				}
			}
		})
	})
}

func TestKubernetesSubmitJob(t *testing.T) {
	objs := loadK8sBase(t)
	configMaps := map[string]map[string]string{}
	var job *k8sObject
	for i, o := range objs {
		switch {
		case o.Kind == "ConfigMap":
			configMaps[o.Metadata.Name] = o.Data
		case o.Kind == "Job" && o.Metadata.Name == "bronze-submit":
			job = &objs[i]
		}
	}
	if job == nil {
		t.Fatal("no Job bronze-submit in k8s/base")
	}
	var c k8sContainer
	for _, ctr := range job.Spec.Template.Spec.Containers {
		if len(ctr.Command) > 0 && ctr.Command[0] == "/opt/haade/bronze" {
			c = ctr
		}
	}
	if c.Name == "" {
		t.Fatal("Job bronze-submit has no container running /opt/haade/bronze")
	}
	env := containerEnv(t, c, configMaps)

	// Every HAADE_* variable must name a flag: a typo would be ignored.
	names := map[string]bool{}
	fs := runners.NewFlagSet("bronze")
	bronze.Flags(fs)
	fs.VisitAll(func(f *flag.Flag) { names[flagenv.EnvName(f.Name)] = true })
	for k := range env {
		if strings.HasPrefix(k, "HAADE_") && !names[k] && !k8sSecretEnv[k] {
			t.Errorf("environment variable %s sets no flag of bronze", k)
		}
	}

	// The pods mount the cluster CA there; here a test CA stands in.
	if env["HAADE_KAFKA_TLS_CA"] != k8sKafkaCA {
		t.Errorf("HAADE_KAFKA_TLS_CA %q, want %s", env["HAADE_KAFKA_TLS_CA"], k8sKafkaCA)
	}
	env["HAADE_KAFKA_TLS_CA"] = testCAFile(t)
	for _, a := range c.Args {
		if strings.Contains(a, "password") {
			t.Errorf("a password on the command line: %s", a)
		}
	}

	keepFlags(t)
	cfg, err := parseArgs(c.Args, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("bronze %s: %v", strings.Join(c.Args, " "), err)
	}
	got := map[string]any{
		"runner": cfg.Runner, "endpoint": cfg.Endpoint, "brokers": cfg.Kafka.Brokers, "topic": cfg.Kafka.Topic,
		"catalog": cfg.Catalog.Type, "catalog-name": cfg.Catalog.Name, "warehouse": cfg.Catalog.Warehouse,
		"s3-endpoint": cfg.Catalog.S3Endpoint, "table": cfg.Table, "dlq-table": cfg.DLQTable,
		"pipeline-id": cfg.Pipeline, "metrics-addr": cfg.MetricsAddr, "log-format": cfg.LogFormat, "bounded": cfg.Bounded,
		"environment_type":   flag.Lookup("environment_type").Value.String(),
		"environment_config": flag.Lookup("environment_config").Value.String(),
		"worker_binary":      flag.Lookup("worker_binary").Value.String(),
		"kafka-tls":          cfg.Kafka.TLS, "kafka-sasl-mechanism": cfg.Kafka.SASLMechanism,
		"kafka-sasl-user": cfg.Kafka.SASLUser, "kafka-sasl-password": cfg.Kafka.SASLPassword,
	}
	want := map[string]any{
		"runner": "flink", "endpoint": "beam-jobserver.lakehouse.svc.cluster.local:8099",
		"brokers": []string{"recovery-kafka-kafka-bootstrap.kafka.svc.cluster.local:9094"}, "topic": "fintech.debt.raw",
		"catalog": "sql", "catalog-name": "local", "warehouse": "s3://warehouse/", "s3-endpoint": "http://minio.lakehouse:9000",
		"table": "lakehouse.bronze_events", "dlq-table": "lakehouse.bronze_events_dlq",
		"pipeline-id": "bronze", "metrics-addr": ":9102", "log-format": "json", "bounded": false,
		"environment_type": "EXTERNAL", "environment_config": "localhost:50000", "worker_binary": "/opt/haade/bronze",
		// The TLS listener as the KafkaUser bronze; the password is the
		// Strimzi Secret's (a placeholder here), from the environment.
		"kafka-tls": true, "kafka-sasl-mechanism": "SCRAM-SHA-512",
		"kafka-sasl-user": "bronze", "kafka-sasl-password": "placeholder-haade-kafka-sasl-password",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the submit Job's configuration (-want +got):\n%s", diff)
	}
	// The catalog role, its password not in the URI (HAADE_CATALOG_PASSWORD).
	wantURI := "postgres://haade_bronze@postgres.lakehouse:5432/placeholder-postgres-db?sslmode=disable"
	if cfg.Catalog.URI != wantURI {
		t.Errorf("catalog URI %q, want %q", cfg.Catalog.URI, wantURI)
	}
	if _, err := cfg.Catalog.Properties(); err != nil {
		t.Errorf("catalog properties: %v", err)
	}
}
