//go:build apiserver

package k8s_test

// The manifests against a real kube-apiserver: the operators' CRDs installed
// for real, then a server-side dry run of every overlay and of k8s/argocd,
// then the invalid resources of TestSchemasRejectInvalid and some built-in
// ones, each of which the server must reject. The server is the one
// testing/cluster/apiserver.sh builds and runs (kube-apiserver and etcd,
// 127.0.0.1 only, no controllers, no nodes):
//
//	testing/cluster/apiserver.sh install   # once; cached in $HAADE_CACHE
//	go test -tags apiserver -run TestAPIServer ./k8s/
//
// The test starts the server when it is not running (and stops it again),
// and skips when the binaries are not built. .ci/k8sapi runs it and fails on
// a skip.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/cmdtest"
)

// fieldManager owns what the test applies, so its objects can be told apart.
const fieldManager = "haade-apiserver-test"

// kubectl runs one kubectl against the test server only: its kubeconfig is
// always the script's, never the caller's KUBECONFIG.
type kubectl struct {
	bin, kubeconfig string
}

// run runs kubectl with args and stdin; it returns stdout, stderr and the
// exit error. Each run gets its own discovery cache, so a CRD installed a
// moment ago is always seen.
func (k kubectl) run(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args = append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// must runs kubectl and fails the test when it fails.
func (k kubectl) must(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// apiServer returns a kubectl for the server of testing/cluster/apiserver.sh,
// starting the server (and stopping it at the end) when it is not running.
// It skips when kube-apiserver is not built.
func apiServer(t *testing.T) kubectl {
	t.Helper()
	script := filepath.Join(cmdtest.MustRepoRoot(t), "testing", "cluster", "apiserver.sh")
	env, err := exec.Command(script, "env").Output()
	if err != nil {
		t.Fatalf("%s env: %v", script, err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			vars[k] = v
		}
	}
	k := kubectl{bin: vars["HAADE_KUBECTL"], kubeconfig: vars["KUBECONFIG"]}
	if b := os.Getenv("HAADE_KUBECTL"); b != "" {
		k.bin = b // e.g. /usr/bin/kubectl, to try another client version
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(vars["HAADE_KUBECTL"]), "kube-apiserver")); err != nil {
		t.Skipf("kube-apiserver is not built: run testing/cluster/apiserver.sh install (%v)", err)
	}
	if err := exec.Command(script, "status").Run(); err != nil {
		t.Logf("starting the API server: %s start", script)
		if out, err := exec.Command(script, "start").CombinedOutput(); err != nil {
			t.Fatalf("%s start: %v\n%s", script, err, out)
		}
		t.Cleanup(func() {
			if out, err := exec.Command(script, "stop").CombinedOutput(); err != nil {
				t.Errorf("%s stop: %v\n%s", script, err, out)
			}
		})
	}
	t.Logf("kubectl %s: %s", k.bin, strings.Join(strings.Fields(k.must(t, nil, "version")), " "))
	return k
}

// yamlStream joins objects into one multi-document YAML stream.
func yamlStream(objs []object) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		b.WriteString("---\n")
		b.Write(o.Raw)
		if !bytes.HasSuffix(o.Raw, []byte("\n")) {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// kubectlName is how kubectl names an object in its output: "kind.group/name"
// with the kind in lower case, e.g. "deployment.apps/beam-jobserver".
func kubectlName(o object) string {
	kind := strings.ToLower(o.kind())
	if group, _, ok := strings.Cut(o.apiVersion(), "/"); ok {
		kind += "." + group
	}
	return kind + "/" + o.name()
}

// dryRunArgs is a server-side apply that the server validates and admits in
// full, with strict field validation, and does not store.
var dryRunArgs = []string{"apply", "--dry-run=server", "--server-side", "--validate=strict",
	"--field-manager=" + fieldManager, "-f", "-"}

// installCRDs applies every CRD in k8s/crds for real and waits until each is
// Established and its names accepted.
func installCRDs(t *testing.T, k kubectl) {
	t.Helper()
	dir := filepath.Join(k8sDir(t), "crds")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no CRDs in k8s/crds")
	}
	k.must(t, nil, "apply", "--server-side", "--field-manager="+fieldManager, "-f", dir)
	k.must(t, nil, "wait", "--for=condition=Established", "--timeout=120s", "-f", dir)
	var got struct {
		Items []struct {
			Metadata struct{ Name string }
			Status   struct {
				Conditions []struct{ Type, Status string }
			}
		}
	}
	if err := json.Unmarshal([]byte(k.must(t, nil, "get", "-f", dir, "-o", "json")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(files) {
		t.Fatalf("%d CRD files, %d CRDs on the server", len(files), len(got.Items))
	}
	for _, crd := range got.Items {
		cond := map[string]string{}
		for _, c := range crd.Status.Conditions {
			cond[c.Type] = c.Status
		}
		if cond["Established"] != "True" || cond["NamesAccepted"] != "True" {
			t.Errorf("CRD %s: conditions %v, want Established and NamesAccepted True", crd.Metadata.Name, cond)
		}
	}
	t.Logf("%d CRDs established", len(got.Items))
}

// createNamespaces creates, for real, every namespace the objects are in or
// declare: a server-side dry run of a namespaced object needs its namespace.
func createNamespaces(t *testing.T, k kubectl, objs []object) {
	t.Helper()
	set := map[string]bool{}
	for _, o := range objs {
		if ns := o.namespace(); ns != "" {
			set[ns] = true
		}
		if o.gvk() == "v1/Namespace" {
			set[o.name()] = true
		}
	}
	var names []string
	var b strings.Builder
	for ns := range set {
		names = append(names, ns)
		b.WriteString("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n")
	}
	sort.Strings(names)
	k.must(t, []byte(b.String()), "apply", "--server-side", "--field-manager="+fieldManager+"-namespaces", "-f", "-")
	out := k.must(t, nil, append([]string{"get", "namespace", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}"}, names...)...)
	for _, ns := range names {
		if !strings.Contains(" "+out, " "+ns+"=Active ") {
			t.Errorf("namespace %s is not Active: %s", ns, out)
		}
	}
	t.Logf("namespaces: %s", strings.Join(names, ", "))
}

func firstOfKind(objs []object, kind string) *object {
	for i := range objs {
		if objs[i].kind() == kind {
			return &objs[i]
		}
	}
	return nil
}

// invalidBuiltin are changes to built-in objects that the API server's own
// validation rejects. The unit tier's strict decoding catches a misspelt
// field and a malformed quantity (inProcess); the others decode into their
// types, and only the server's validation knows they are invalid.
var invalidBuiltin = []struct {
	name, kind string
	change     func(m map[string]any)
	// want is part of the server's message.
	want string
	// inProcess: the unit tier's validate rejects it too.
	inProcess bool
}{
	{"Deployment misspelt field", "Deployment", func(m map[string]any) {
		mapAt(m, "spec")["replica"] = 1
	}, `.spec.replica: field not declared in schema`, true},
	{"Deployment image pull policy", "Deployment", func(m map[string]any) {
		list(m, "spec", "template", "spec", "containers")[0].(map[string]any)["imagePullPolicy"] = "Sometimes"
	}, `spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes"`, false},
	{"StatefulSet memory quantity", "StatefulSet", func(m map[string]any) {
		c := list(m, "spec", "template", "spec", "containers")[0].(map[string]any)
		c["resources"] = map[string]any{"limits": map[string]any{"memory": "2Gx"}}
	}, `quantities must match the regular expression`, true},
	{"Job restart policy Always", "Job", func(m map[string]any) {
		mapAt(m, "spec", "template", "spec")["restartPolicy"] = "Always"
	}, `spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`, false},
	{"CronJob schedule in words", "CronJob", func(m map[string]any) {
		mapAt(m, "spec")["schedule"] = "every hour"
	}, `spec.schedule: Invalid value: "every hour"`, false},
	{"Service port out of range", "Service", func(m map[string]any) {
		list(m, "spec", "ports")[0].(map[string]any)["port"] = 70000
	}, `spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535`, false},
	{"ConfigMap name not a DNS name", "ConfigMap", func(m map[string]any) {
		mapAt(m, "metadata")["name"] = "Bronze_Config"
	}, `a lowercase RFC 1123 subdomain`, false},
}

// serverRejects is, for each case of invalidCustomResources, part of the
// message the real server gives.
var serverRejects = map[string]string{
	"PodMonitor interval in words":                       `spec.podMetricsEndpoints[0].interval: Invalid value: "15 seconds"`,
	"alert rule for in words":                            `spec.groups[0].rules[0].for: Invalid value: "1 minute"`,
	"Kafka listener type":                                `spec.kafka.listeners[0].type: Unsupported value: "clusterip"`,
	"Kafka ZooKeeper":                                    `.spec.zookeeper: field not declared in schema`,
	"KafkaNodePool role":                                 `spec.roles[1]: Unsupported value: "leader"`,
	"KafkaTopic misspelt field":                          `.spec.partition: field not declared in schema`,
	"FlinkDeployment version":                            `spec.flinkVersion: Unsupported value: "v1_99"`,
	"FlinkDeployment configuration value not a string":   `.spec.flinkConfiguration.taskmanager.numberOfTaskSlots: expected string`,
	"PrometheusRule rule without expr":                   `spec.groups[0].rules[0].expr: Required value`,
	"Kafka metrics without their ConfigMap (a CEL rule)": `valueFrom property is required`,
	"ExternalSecret store kind":                          `spec.secretStoreRef.kind: Unsupported value: "Store"`,
	"Application without a project":                      `spec.project: Required value`,
	"KafkaUser ACL operation misspelt":                   `spec.authorization.acls[0].operations[0]: Unsupported value: "Reed"`,
	"KafkaUser authentication type":                      `spec.authentication.type: Unsupported value: "scram-sha-1"`,
	"Kafka authorization type":                           `spec.kafka.authorization.type: Unsupported value: "acl"`,
	"PodMonitor scheme":                                  `spec.podMetricsEndpoints[0].scheme: Unsupported value: "tcp"`,
}

// TestAPIServer validates the rendered manifests against a real
// kube-apiserver with the operators' real CRDs.
func TestAPIServer(t *testing.T) {
	k := apiServer(t)
	builds := map[string][]object{}
	var all []object
	// The overlays, the Applications, and what the node's GitOps test runs:
	// Argo CD itself and the Applications pointed at the node's git server.
	dirs := append(append([]string{}, overlays...), "argocd", "operators/argocd", "argocd-node")
	for _, dir := range dirs {
		builds[dir] = kustomizeBuild(t, dir)
		all = append(all, builds[dir]...)
	}
	installCRDs(t, k)
	createNamespaces(t, k, all)

	for _, dir := range dirs {
		t.Run("dry run k8s/"+dir, func(t *testing.T) {
			objs := builds[dir]
			out, errOut, err := k.run(t, yamlStream(objs), dryRunArgs...)
			if err != nil {
				t.Fatalf("kubectl apply --dry-run=server of k8s/%s: %v\n%s", dir, err, errOut)
			}
			if strings.TrimSpace(errOut) != "" {
				t.Errorf("the server warned about k8s/%s:\n%s", dir, errOut)
			}
			var want, got []string
			for _, o := range objs {
				want = append(want, kubectlName(o)+" serverside-applied (server dry run)")
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				got = append(got, strings.TrimSpace(line))
			}
			sort.Strings(want)
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("kubectl output for k8s/%s (-want +got):\n%s", dir, d)
			}
			t.Logf("k8s/%s: %d objects accepted by the server (dry run)", dir, len(objs))
		})
	}

	// A dry run stores nothing: none of the workloads exists.
	if out := k.must(t, nil, "get", "deployments,statefulsets,jobs,cronjobs,kafkas,flinkdeployments,applications",
		"--all-namespaces", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("the dry runs stored objects:\n%s", out)
	}

	type reject struct {
		name, kind string
		change     func(map[string]any)
		want       string
		inProcess  bool
	}
	var cases []reject
	for _, c := range invalidCustomResources {
		want, ok := serverRejects[c.name]
		if !ok {
			t.Errorf("invalidCustomResources %q: no server message in serverRejects", c.name)
			continue
		}
		cases = append(cases, reject{c.name, c.kind, c.change, want, true})
	}
	for _, c := range invalidBuiltin {
		cases = append(cases, reject{c.name, c.kind, c.change, c.want, c.inProcess})
	}
	for _, c := range cases {
		t.Run("rejects/"+c.name, func(t *testing.T) {
			target := firstOfKind(all, c.kind)
			if target == nil {
				t.Fatalf("no build renders a %s", c.kind)
			}
			bad := mutate(t, *target, c.change)
			out, errOut, err := k.run(t, yamlStream([]object{bad}), dryRunArgs...)
			if err == nil {
				t.Fatalf("%s: the server accepted it:\n%s%s", bad.id(), out, errOut)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("%s: the server's error does not contain %q:\n%s", bad.id(), c.want, errOut)
			}
			t.Logf("rejected: %s", strings.TrimSpace(errOut))
			if got := len(validate(bad)) > 0; got != c.inProcess {
				t.Errorf("%s: the unit tier's validate rejects it: %v, want %v", bad.id(), got, c.inProcess)
			}
		})
	}
}
