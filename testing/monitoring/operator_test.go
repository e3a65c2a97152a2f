//go:build monitoring

package monitoring

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
	"gopkg.in/yaml.v3"
)

// The CRDs k8s/operators/prometheus needs, applied first, as its
// kustomization says.
var operatorCRDs = []string{"prometheuses", "podmonitors", "servicemonitors", "probes", "prometheusrules"}

// TestOperatorReconcilesHaade runs the Prometheus operator that prometheus.sh
// builds against a real kube-apiserver (testing/cluster/apiserver.sh, on
// loopback ports of its own, with its own run folder), as the ServiceAccount
// k8s/operators/prometheus gives it (impersonated: its ClusterRole is what is
// tested), with the arguments of that Deployment. There is no kubelet: the
// test reads what the operator makes of the manifests, not a running pod.
//
//  1. the five CRDs, k8s/operators/prometheus, the namespace lakehouse with
//     k8s/base's PodMonitors and k8s/monitoring's PrometheusRules, server-side;
//  2. the operator reports Prometheus/haade Reconciled, and makes the
//     StatefulSet prometheus-haade with the images built here (Prometheus, and
//     the config reloader as init container and sidecar);
//  3. its generated configuration (Secret prometheus-haade) has a scrape job
//     for PodMonitor/bronze and PodMonitor/haade-flink, discovering pods in
//     lakehouse and keeping the ports bronze-metrics and flink-metrics; its
//     rule ConfigMap holds both PrometheusRules' alerts; with promtool built
//     (k8s/monitoring/promtool.sh) both also pass promtool's checks;
//  4. a pod of that StatefulSet's template is admitted in the namespace
//     monitoring under Pod Security "restricted" (a server-side dry run);
//  5. the operator logged no error and no missing permission.
func TestOperatorReconcilesHaade(t *testing.T) {
	operator := cachedBinary(t, "HAADE_PROMETHEUS_OPERATOR", "operator-v0.85.0", "operator")
	root := cmdtest.MustRepoRoot(t)
	script := filepath.Join(root, "testing", "cluster", "apiserver.sh")
	run := t.TempDir()
	env := append(os.Environ(), "HAADE_RUN="+run,
		"APISERVER_PORT="+freePort(t), "ETCD_PORT="+freePort(t), "ETCD_PEER_PORT="+freePort(t))
	vars := map[string]string{}
	{
		cmd := exec.Command(script, "env")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s env: %v", script, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
				vars[k] = v
			}
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(vars["HAADE_KUBECTL"]), "kube-apiserver")); err != nil {
		t.Skipf("kube-apiserver is not built: run testing/cluster/apiserver.sh install (%v)", err)
	}
	start := exec.Command(script, "start")
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("%s start: %v\n%s", script, err, out)
	}
	t.Cleanup(func() {
		reset := exec.Command(script, "reset")
		reset.Env = env
		if out, err := reset.CombinedOutput(); err != nil {
			t.Errorf("%s reset: %v\n%s", script, err, out)
		}
	})
	k := kube{t: t, bin: vars["HAADE_KUBECTL"], kubeconfig: vars["KUBECONFIG"]}

	// 1.
	var crds []string
	for _, c := range operatorCRDs {
		crds = append(crds, "-f", filepath.Join(root, "k8s", "crds", "prometheus-"+c+".yaml"))
	}
	k.must(append([]string{"apply", "--server-side"}, crds...)...)
	k.must(append([]string{"wait", "--for=condition=Established", "--timeout=120s"}, crds...)...)
	// The API server serves a new CRD's kind a moment after it is Established.
	waitFor(t, 60*time.Second, "the CRDs' kinds served", func() (bool, string) {
		out, errOut, err := k.run("get", "prometheuses,podmonitors,prometheusrules", "-A")
		return err == nil, out + errOut
	})
	k.must("apply", "--server-side", "-k", filepath.Join(root, "k8s", "operators", "prometheus"))
	k.must("create", "namespace", "lakehouse")
	k.must("apply", "--server-side", "-f", filepath.Join(root, "k8s", "base", "lakehouse", "monitoring.yaml"),
		"-f", filepath.Join(root, "k8s", "monitoring", "prometheusrule.yaml"),
		"-f", filepath.Join(root, "k8s", "monitoring", "flink-prometheusrule.yaml"))

	// The operator, with its Deployment's arguments, as its ServiceAccount.
	args := deploymentArgs(t, filepath.Join(root, "k8s", "operators", "prometheus", "operator.yaml"), "prometheus-operator")
	for i, a := range args {
		if strings.HasPrefix(a, "--web.listen-address=") {
			args[i] = "--web.listen-address=127.0.0.1:" + freePort(t)
		}
	}
	pki := filepath.Join(run, "k8s-apiserver", "pki")
	args = append(args, "--apiserver="+k.server(), "--ca-file="+filepath.Join(pki, "ca.crt"),
		"--cert-file="+filepath.Join(pki, "admin.crt"), "--key-file="+filepath.Join(pki, "admin.key"),
		"--as=system:serviceaccount:monitoring:prometheus-operator")
	logPath := filepath.Join(run, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	op := exec.Command(operator, args...)
	op.Stdout, op.Stderr = logFile, logFile
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	opDone := make(chan error, 1)
	go func() { opDone <- op.Wait() }()
	defer func() {
		_ = op.Process.Kill()
		<-opDone
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("the operator's log:\n%s", tail(b, 40))
		}
	}()
	t.Logf("operator %s", strings.Join(args[:len(args)-4], " "))

	// 2.
	waitFor(t, 120*time.Second, "Prometheus/haade reconciled", func() (bool, string) {
		checkAlive(t, opDone, "the operator")
		out, errOut, err := k.run("-n", "monitoring", "get", "prometheus", "haade", "-o",
			`jsonpath={range .status.conditions[*]}{.type}={.status} {end}`)
		return err == nil && strings.Contains(out, "Reconciled=True"), out + errOut
	})
	var sts struct {
		Spec struct {
			Template struct {
				Metadata json.RawMessage `json:"metadata"`
				Spec     struct {
					InitContainers []struct{ Name, Image string } `json:"initContainers"`
					Containers     []struct {
						Name, Image string
						Args        []string
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	waitFor(t, 60*time.Second, "StatefulSet prometheus-haade", func() (bool, string) {
		out, errOut, err := k.run("-n", "monitoring", "get", "statefulset", "prometheus-haade", "-o", "json")
		return err == nil && json.Unmarshal([]byte(out), &sts) == nil, errOut
	})
	images := map[string]string{}
	for _, c := range sts.Spec.Template.Spec.InitContainers {
		images["init "+c.Name] = c.Image
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		images[c.Name] = c.Image
	}
	want := map[string]string{
		"prometheus":                "localhost/haade-prometheus:dev",
		"config-reloader":           "localhost/haade-prometheus-config-reloader:dev",
		"init init-config-reloader": "localhost/haade-prometheus-config-reloader:dev",
	}
	for name, image := range want {
		if images[name] != image {
			t.Errorf("StatefulSet prometheus-haade: container %q runs %q, want %q (all: %v)", name, images[name], image, images)
		}
	}
	t.Logf("StatefulSet prometheus-haade: %v", images)

	// 3.
	config := gunzipSecret(t, k, "monitoring", "prometheus-haade", "prometheus.yaml.gz")
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			KubernetesSDs []struct {
				Role       string `yaml:"role"`
				Namespaces struct {
					Names []string `yaml:"names"`
				} `yaml:"namespaces"`
			} `yaml:"kubernetes_sd_configs"`
			Relabel []map[string]any `yaml:"relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		t.Fatalf("the generated configuration: %v\n%s", err, config)
	}
	jobs := map[string]string{ // job -> the container port name it keeps
		"podMonitor/lakehouse/bronze/0":      "bronze-metrics",
		"podMonitor/lakehouse/haade-flink/0": "flink-metrics",
	}
	for _, sc := range cfg.ScrapeConfigs {
		port, ok := jobs[sc.JobName]
		if !ok {
			continue
		}
		delete(jobs, sc.JobName)
		if len(sc.KubernetesSDs) != 1 || sc.KubernetesSDs[0].Role != "pod" || fmt.Sprint(sc.KubernetesSDs[0].Namespaces.Names) != "[lakehouse]" {
			t.Errorf("%s: discovery %+v, want pods in lakehouse", sc.JobName, sc.KubernetesSDs)
		}
		keepsPort := false
		for _, r := range sc.Relabel {
			if r["action"] == "keep" && r["regex"] == port && fmt.Sprint(r["source_labels"]) == "[__meta_kubernetes_pod_container_port_name]" {
				keepsPort = true
			}
		}
		if !keepsPort {
			t.Errorf("%s: no relabelling keeps the port %s: %v", sc.JobName, port, sc.Relabel)
		}
	}
	if len(jobs) != 0 {
		t.Errorf("the generated configuration has no scrape job for %v:\n%s", jobs, config)
	}
	if len(cfg.RuleFiles) != 1 || !strings.HasPrefix(cfg.RuleFiles[0], "/etc/prometheus/rules/prometheus-haade-rulefiles-0/") {
		t.Errorf("rule_files %v", cfg.RuleFiles)
	}
	var rules struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(k.must("-n", "monitoring", "get", "configmap", "prometheus-haade-rulefiles-0", "-o", "json")), &rules); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var ruleFiles []string
	var all strings.Builder
	for name, body := range rules.Data {
		all.WriteString(body)
		ruleFiles = append(ruleFiles, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, alert := range []string{"HaadeNoCommit", "HaadeDeadLetterRateHigh", "HaadeLagGrowing", "HaadeCommitRetriesClimbing",
		"HaadeFlinkJobRestarting", "HaadeFlinkCheckpointsFailing", "HaadeFlinkJobNotRunning"} {
		if !strings.Contains(all.String(), "alert: "+alert+"\n") {
			t.Errorf("the rule files %v have no alert %s", ruleFiles, alert)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yaml"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	if promtool := promtoolBinary(); promtool != "" {
		for _, a := range [][]string{{"check", "config", "--syntax-only", "prometheus.yaml"}, append([]string{"check", "rules"}, ruleFiles...)} {
			cmd := exec.Command(promtool, a...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool %v: %v\n%s", a, err, out)
			}
		}
	} else {
		t.Log("promtool not built (k8s/monitoring/promtool.sh): the generated configuration is not checked by promtool")
	}

	// 4.
	var tmpl map[string]any
	out := k.must("-n", "monitoring", "get", "statefulset", "prometheus-haade", "-o", "jsonpath={.spec.template}")
	if err := json.Unmarshal([]byte(out), &tmpl); err != nil {
		t.Fatal(err)
	}
	meta, _ := tmpl["metadata"].(map[string]any)
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "prometheus-haade-0", "namespace": "monitoring", "labels": meta["labels"]},
		"spec":     tmpl["spec"]}
	b, _ := json.Marshal(pod)
	k.mustIn(b, "create", "--dry-run=server", "-f", "-")

	// 5.
	logged, _ := os.ReadFile(logPath)
	for _, line := range strings.Split(string(logged), "\n") {
		if strings.Contains(line, "level=error") || strings.Contains(line, "missing permission") {
			t.Errorf("the operator logged: %s", line)
		}
	}
}

// cachedBinary is $env, or the binary prometheus.sh builds into
// $HAADE_CACHE/prometheus/DIR/bin/NAME; the test is skipped without it.
func cachedBinary(t *testing.T, env, dir, name string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		bin = filepath.Join(haadeCache(), "prometheus", dir, "bin", name)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not built (%v): run testing/monitoring/prometheus.sh install, or set %s", name, err, env)
	}
	return bin
}

func haadeCache() string {
	if c := os.Getenv("HAADE_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "haade")
}

// promtoolBinary is the promtool of k8s/monitoring/promtool.sh, or "".
func promtoolBinary() string {
	p := os.Getenv("HAADE_PROMTOOL")
	if p == "" {
		p = filepath.Join(haadeCache(), "promtool", promVersion, "promtool")
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	return port
}

// deploymentArgs is the args of the named container of the Deployment in a
// manifest file.
func deploymentArgs(t *testing.T, path, container string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var d struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name string   `yaml:"name"`
							Args []string `yaml:"args"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&d); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if d.Kind == "Deployment" && c.Name == container {
				return append([]string(nil), c.Args...)
			}
		}
	}
	t.Fatalf("%s: no Deployment with a container %s", path, container)
	return nil
}

func gunzipSecret(t *testing.T, k kube, ns, name, key string) []byte {
	t.Helper()
	out := k.must("-n", ns, "get", "secret", name, "-o", "jsonpath={.data."+strings.ReplaceAll(key, ".", `\.`)+"}")
	raw, err := base64.StdEncoding.DecodeString(out)
	if err != nil {
		t.Fatalf("secret %s/%s key %s: %v", ns, name, key, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("secret %s/%s key %s: %v", ns, name, key, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kube runs the kubectl apiserver.sh builds against its server.
type kube struct {
	t               *testing.T
	bin, kubeconfig string
}

func (k kube) run(args ...string) (string, string, error) {
	return k.runIn(nil, args...)
}

func (k kube) runIn(stdin []byte, args ...string) (string, string, error) {
	cmd := exec.Command(k.bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func (k kube) must(args ...string) string { return k.mustIn(nil, args...) }

func (k kube) mustIn(stdin []byte, args ...string) string {
	k.t.Helper()
	out, errOut, err := k.runIn(stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// server is the API server's URL, from the kubeconfig.
func (k kube) server() string {
	k.t.Helper()
	return strings.TrimSpace(k.must("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}"))
}
