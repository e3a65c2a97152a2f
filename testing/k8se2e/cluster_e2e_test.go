//go:build cluster

package k8se2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/tables"
)

const (
	topic   = "fintech.debt.raw"
	overlay = "k8s/overlays/node"
	// The HAADE image under a second tag, loaded into the node by .ci/cluster: the
	// rollout step deploys it as a new version would be deployed.
	rolloutImage = "localhost/haade:rollout"
)

// kube runs the kubectl of testing/cluster/apiserver.sh (HAADE_KUBECTL) against
// KUBECONFIG.
type kube struct {
	t   *testing.T
	bin string
}

func newKube(t *testing.T) kube {
	t.Helper()
	bin := os.Getenv("HAADE_KUBECTL")
	if bin == "" || os.Getenv("KUBECONFIG") == "" {
		t.Skip("no cluster: set KUBECONFIG and HAADE_KUBECTL (testing/cluster/apiserver.sh env), with the node of testing/cluster/node.sh running; .ci/cluster does all of it")
	}
	k := kube{t: t, bin: bin}
	out, err := k.run(30*time.Second, "get", "nodes", "-o", `jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}`)
	if err != nil || !strings.Contains(out, "True") {
		t.Skipf("no Ready node (testing/cluster/node.sh start): %v %s", err, out)
	}
	return k
}

func (k kube) run(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (k kube) must(timeout time.Duration, args ...string) string {
	k.t.Helper()
	out, err := k.run(timeout, args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

// apply applies YAML from stdin, server-side, as Argo CD does.
func (k kube) apply(yaml string) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, "apply", "--server-side", "--force-conflicts", "--field-manager=haade-e2e", "-f", "-")
	cmd.Stdin = strings.NewReader(yaml)
	if out, err := cmd.CombinedOutput(); err != nil {
		k.t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// render builds the overlay with kubectl's kustomize, with every old image name
// replaced by its new one, and the restart alert's test thresholds
// (restartRules).
func (k kube) render(replace map[string]string) string {
	k.t.Helper()
	out := k.kustomize(overlay)
	for from, to := range replace {
		out = strings.ReplaceAll(out, "image: "+from+"\n", "image: "+to+"\n")
	}
	return restartRules(k.t, out)
}

// kustomize renders a kustomization of the repository.
func (k kube) kustomize(dir string) string {
	k.t.Helper()
	return k.must(time.Minute, "kustomize", filepath.Join(cmdtest.MustRepoRoot(k.t), dir))
}

// jsonpath reads one field of an object.
func (k kube) jsonpath(ns, obj, path string) string {
	args := []string{"get", obj, "-o", "jsonpath=" + path}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, _ := k.run(30*time.Second, args...)
	return strings.TrimSpace(out)
}

// logs returns the log of a Job's pod that succeeded (`kubectl logs job/NAME`
// picks any of its pods, a failed attempt's too), or of all its pods when none
// did.
func (k kube) logs(ns, job string) string {
	pods, _ := k.run(time.Minute, "-n", ns, "get", "pods", "-l", "job-name="+job,
		"--field-selector=status.phase=Succeeded", "-o", "name")
	var b strings.Builder
	names := strings.Fields(pods)
	if len(names) == 0 {
		all, _ := k.run(time.Minute, "-n", ns, "get", "pods", "-l", "job-name="+job, "-o", "name")
		names = strings.Fields(all)
	}
	for _, p := range names {
		out, err := k.run(time.Minute, "-n", ns, "logs", p, "--all-containers", "--tail=-1")
		if err != nil {
			out = err.Error()
		}
		b.WriteString(out)
	}
	return b.String()
}

// debug logs what helps to see why a wait failed.
func (k kube) debug() {
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "flinkdeployment", "-n", "lakehouse", "-o", "yaml"},
		{"get", "events", "-A", "--field-selector", "type=Warning"},
		{"logs", "-n", "flink-operator", "deploy/flink-kubernetes-operator", "--tail=60"},
		{"logs", "-n", "lakehouse", "deploy/haade-flink", "--tail=60"},
		{"logs", "-n", "lakehouse", "job/bronze-submit", "--tail=60"},
		{"get", "prometheus,podmonitor,prometheusrule", "-A"},
		{"logs", "-n", "monitoring", "deploy/prometheus-operator", "--tail=40"},
		{"logs", "-n", "monitoring", "pod/prometheus-haade-0", "-c", "prometheus", "--tail=40"},
	} {
		out, err := k.run(time.Minute, args...)
		k.t.Logf("kubectl %s:\n%s%v", strings.Join(args, " "), out, err)
	}
}

// installPlatform installs what a platform team installs before any overlay:
// the Prometheus operator's CRDs (the overlays' PodMonitors and
// PrometheusRules, and the node's Prometheus), the Flink operator's and any
// given (repository paths), each Established; then the Kafka Secrets
// (k8s/components/kafka-without-strimzi/secrets.sh), which also make the
// namespaces kafka and lakehouse.
func installPlatform(t *testing.T, k kube, crds ...string) {
	t.Helper()
	root := cmdtest.MustRepoRoot(t)
	files := append([]string{"k8s/crds/prometheus-prometheuses.yaml", "k8s/crds/prometheus-podmonitors.yaml",
		"k8s/crds/prometheus-prometheusrules.yaml", "k8s/crds/prometheus-servicemonitors.yaml",
		"k8s/crds/prometheus-probes.yaml", "k8s/operators/flink/crd-flinkdeployments.yaml",
		"k8s/operators/flink/crd-flinksessionjobs.yaml"}, crds...)
	var names []string
	for _, f := range files {
		out := k.must(2*time.Minute, "apply", "--server-side", "--force-conflicts", "-o", "name", "-f", filepath.Join(root, f))
		names = append(names, strings.Fields(out)...)
	}
	// Polled, not `kubectl wait`: that fails at once on a CRD whose status has no
	// conditions yet ("status.conditions accessor error").
	for _, crd := range names {
		waitFor(t, k, 2*time.Minute, crd+" established", func() (bool, string) {
			s := k.jsonpath("", crd, `{.status.conditions[?(@.type=="Established")].status}`)
			return s == "True", "Established=" + s
		})
	}
	secrets := exec.Command(filepath.Join(root, "k8s/components/kafka-without-strimzi/secrets.sh"))
	secrets.Env = append(os.Environ(), "KUBECTL="+k.bin)
	out, err := secrets.CombinedOutput()
	if err != nil {
		t.Fatalf("secrets.sh: %v\n%s", err, out)
	}
	t.Logf("secrets.sh:\n%s", out)
}

// waitFor polls cond every 2 s until it holds, or fails with what it last said.
func waitFor(t *testing.T, k kube, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	t0 := time.Now()
	var last string
	if err := wait.Every(ctx, 2*time.Second, func() error {
		ok, s := cond()
		if last = s; !ok {
			return errors.New(s)
		}
		return nil
	}); err != nil {
		k.debug()
		t.Fatalf("%s: not within %v; last: %s", what, d, last)
	}
	t.Logf("%s in %v (%s)", what, time.Since(t0).Round(time.Second), last)
}

// jobDone waits for a Job to succeed; a Job that failed fails the test with its logs.
func jobDone(t *testing.T, k kube, ns, name string, d time.Duration) {
	t.Helper()
	waitFor(t, k, d, "Job "+ns+"/"+name+" succeeded", func() (bool, string) {
		if k.jsonpath(ns, "job/"+name, `{.status.conditions[?(@.type=="Failed")].status}`) == "True" {
			t.Fatalf("Job %s/%s failed:\n%s", ns, name, k.logs(ns, name))
		}
		s := k.jsonpath(ns, "job/"+name, `{.status.succeeded}`)
		return s == "1", "succeeded=" + s
	})
}

// produce runs a Job of the HAADE image's producer in lakehouse, as the Kafka user
// producer (write on the topic only), through the TLS/SCRAM listener.
func produce(t *testing.T, k kube, name string, count int, rate float64, seed int) {
	t.Helper()
	k.apply(fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: lakehouse
  labels: {app.kubernetes.io/name: produce}
spec:
  backoffLimit: 10
  template:
    metadata:
      labels: {app.kubernetes.io/name: produce}
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: produce
          image: localhost/haade:dev
          imagePullPolicy: IfNotPresent
          command: [/opt/haade/produce]
          args: [--count=%d, --rate=%g, --seed=%d, --connect-timeout=60s]
          envFrom: [{configMapRef: {name: bronze-config}}]
          env:
            - {name: HAADE_KAFKA_SASL_USER, value: producer}
            - name: HAADE_KAFKA_SASL_PASSWORD
              valueFrom: {secretKeyRef: {name: producer, key: password}}
          resources:
            requests: {cpu: 50m, memory: 64Mi}
            limits: {cpu: "1", memory: 256Mi}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
          volumeMounts: [{name: kafka-ca, mountPath: /etc/haade/kafka-ca, readOnly: true}]
      volumes:
        - name: kafka-ca
          secret: {secretName: kafka-cluster-ca-cert, items: [{key: ca.crt, path: ca.crt}]}
`, name, count, rate, seed))
}

type job struct {
	ID    string         `json:"jid"`
	Name  string         `json:"name"`
	State string         `json:"state"`
	Start int64          `json:"start-time"`
	Tasks map[string]int `json:"tasks"`
}

type checkpoints struct {
	Counts struct {
		Restored  int `json:"restored"`
		Completed int `json:"completed"`
	} `json:"counts"`
	Latest struct {
		Completed *struct {
			ID           int64  `json:"id"`
			ExternalPath string `json:"external_path"`
		} `json:"completed"`
		Restored *struct {
			ID           int64  `json:"id"`
			ExternalPath string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
}

// flink is the session cluster's REST API, at its Service's cluster IP.
type flink struct {
	t *testing.T
	k kube
}

// rest is the REST API's client at the Service's current cluster IP: the
// operator deletes and makes again the Service when it redeploys the
// session cluster (a rollout), and the new one has another IP.
func (f flink) rest() *runners.FlinkREST {
	return &runners.FlinkREST{Base: "http://" + f.k.jsonpath("lakehouse", "svc/haade-flink-rest", "{.spec.clusterIP}") + ":8081"}
}

func (f flink) jobs() ([]job, error) {
	var body struct {
		Jobs []job `json:"jobs"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.rest().Get(ctx, "/jobs/overview", &body); err != nil {
		return nil, err
	}
	sort.Slice(body.Jobs, func(i, j int) bool { return body.Jobs[i].Start < body.Jobs[j].Start })
	return body.Jobs, nil
}

func (f flink) checkpoints(jid string) checkpoints {
	var c checkpoints
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = f.rest().Get(ctx, "/jobs/"+jid+"/checkpoints", &c)
	return c
}

// runningJob waits for exactly one RUNNING job, with every task RUNNING.
func (f flink) runningJob(d time.Duration, what string) job {
	f.t.Helper()
	var got job
	waitFor(f.t, f.k, d, what, func() (bool, string) {
		js, err := f.jobs()
		if err != nil {
			return false, err.Error()
		}
		var running []job
		for _, j := range js {
			if j.State == "RUNNING" {
				running = append(running, j)
			}
		}
		if len(running) != 1 {
			return false, fmt.Sprintf("%d RUNNING jobs of %d", len(running), len(js))
		}
		got = running[0]
		return got.Tasks["running"] == got.Tasks["total"], fmt.Sprintf("job %s: %d of %d tasks running", got.ID, got.Tasks["running"], got.Tasks["total"])
	})
	return got
}

// secret reads one key of a Secret.
func (k kube) secret(ns, name, key string) string {
	k.t.Helper()
	out := k.must(30*time.Second, "-n", ns, "get", "secret", name, "-o", "json")
	var s struct {
		Data map[string][]byte `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		k.t.Fatal(err)
	}
	v, ok := s.Data[key]
	if !ok {
		k.t.Fatalf("Secret %s/%s has no key %s", ns, name, key)
	}
	return string(v)
}

// lakehouse opens the catalog (PostgreSQL) and warehouse (MinIO) at their Services'
// cluster IPs, as the pipeline's own identities.
func lakehouse(t *testing.T, k kube) catalog.Catalog {
	t.Helper()
	pg := k.jsonpath("lakehouse", "svc/postgres", "{.spec.clusterIP}")
	minio := k.jsonpath("lakehouse", "svc/minio", "{.spec.clusterIP}")
	t.Setenv("AWS_ACCESS_KEY_ID", k.secret("lakehouse", "minio-credentials", "pipeline-user"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", k.secret("lakehouse", "minio-credentials", "pipeline-password"))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv(icebergio.EnvCatalogPassword, k.secret("lakehouse", "postgres-credentials", "POSTGRES_BRONZE_PASSWORD"))
	db := k.secret("lakehouse", "postgres-credentials", "POSTGRES_DB")
	cfg := icebergio.CatalogConfig{
		URI:        fmt.Sprintf("postgres://haade_bronze@%s:5432/%s?sslmode=disable", pg, db),
		Warehouse:  "s3://warehouse/",
		S3Endpoint: "http://" + minio + ":9000",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := cfg.Open(ctx)
	if err != nil {
		t.Fatalf("open the catalog: %v", err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

// rows reads a table's rows; none while the table does not exist yet.
func rows[T any](t *testing.T, cat catalog.Catalog, ident string) []T {
	t.Helper()
	id, err := icebergio.Identifier(ident)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.LoadTable(context.Background(), id); err != nil {
		return nil
	}
	return icebergtest.Rows[T](t, cat, ident)
}

type offset struct {
	Partition int32
	Offset    int64
}

// exactlyOnce checks that rows hold every offset of the topic once: want records
// in all, no (partition, offset) twice, and each partition's offsets 0..n-1 (the
// producer is not transactional: no gaps).
func exactlyOnce(rows []tables.BronzeEvent, want int) (bool, string) {
	seen := map[offset]int{}
	per := map[int32][]int64{}
	for _, r := range rows {
		if r.KafkaTopic != topic {
			return false, fmt.Sprintf("a row from topic %q", r.KafkaTopic)
		}
		o := offset{r.KafkaPartition, r.KafkaOffset}
		seen[o]++
		if seen[o] == 1 {
			per[r.KafkaPartition] = append(per[r.KafkaPartition], r.KafkaOffset)
		}
	}
	for o, n := range seen {
		if n > 1 {
			return false, fmt.Sprintf("%d rows; (partition %d, offset %d) %d times", len(rows), o.Partition, o.Offset, n)
		}
	}
	for p, offs := range per {
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		if offs[0] != 0 || offs[len(offs)-1] != int64(len(offs)-1) {
			return false, fmt.Sprintf("partition %d: offsets %d..%d for %d rows (a gap)", p, offs[0], offs[len(offs)-1], len(offs))
		}
	}
	return len(rows) == want, fmt.Sprintf("%d rows of %d, each offset once, in %d partitions", len(rows), want, len(per))
}

// TestClusterBronze deploys k8s/overlays/node on the real node and runs bronze
// under the real Flink operator, through a TaskManager's, the JobManager's and
// Kafka's pod deletions, a second submission and a rollout of a new image tag,
// checking after each that every record is in the table exactly once.
func TestClusterBronze(t *testing.T) {
	k := newKube(t)
	t0 := time.Now()

	// 1. Install what a platform team installs first (the CRDs, the Kafka
	// Secrets), then the overlay, server-side.
	installPlatform(t, k)
	k.apply(k.render(nil))
	t.Logf("applied %s in %v", overlay, time.Since(t0).Round(time.Second))

	// 2. The operator reconciles the FlinkDeployment: its status, from the API
	// server, says the JobManager is ready.
	waitFor(t, k, 15*time.Minute, "the Flink operator reconciled haade-flink: JobManager READY", func() (bool, string) {
		s := k.jsonpath("lakehouse", "flinkdeployment/haade-flink", "{.status.jobManagerDeploymentStatus} {.status.lifecycleState}")
		return strings.HasPrefix(s, "READY "), s
	})
	jobDone(t, k, "kafka", "kafka-setup", 10*time.Minute)
	jobDone(t, k, "lakehouse", "minio-bucket", 5*time.Minute)
	jobDone(t, k, "lakehouse", "minio-pipeline-user", 5*time.Minute)

	// The Prometheus operator runs Prometheus/haade, which loads HAADE's rules;
	// from now on every change of an alert's state is recorded.
	pr := prom{t: t, k: k}
	pr.ready(10 * time.Minute)
	alerts := watchAlerts(t, pr)
	defer func() {
		for _, e := range alerts.history(t0) {
			t.Logf("alert seen (time since the overlay was applied, alert, state): %s", e)
		}
	}()

	fl := flink{t: t, k: k}
	cat := lakehouse(t, k)
	bronze := func() []tables.BronzeEvent { return rows[tables.BronzeEvent](t, cat, "lakehouse.bronze_events") }

	// 3. Produce as the least-privileged producer; the submit Job exits 0 with
	// --async, and the rows land exactly once.
	produce(t, k, "produce-1", 3000, 0, 1)
	jobDone(t, k, "lakehouse", "produce-1", 10*time.Minute)
	jobDone(t, k, "lakehouse", "bronze-submit", 20*time.Minute)
	submitLog := k.logs("lakehouse", "bronze-submit")
	if !strings.Contains(submitLog, "--async: the Flink job runs") {
		t.Fatalf("bronze-submit exited 0 without --async's word that the job runs:\n%s", submitLog)
	}
	for _, s := range []string{k.secret("lakehouse", "postgres-credentials", "POSTGRES_BRONZE_PASSWORD"),
		k.secret("lakehouse", "minio-credentials", "pipeline-password"), k.secret("lakehouse", "bronze", "password")} {
		if strings.Contains(submitLog, s) {
			t.Errorf("the submit Job's log holds a secret")
		}
	}
	j1 := fl.runningJob(10*time.Minute, "the Flink job runs every task")
	want := 3000
	waitFor(t, k, 10*time.Minute, "the first batch landed exactly once", func() (bool, string) { return exactlyOnce(bronze(), want) })

	// Prometheus found the pods through PodMonitor/bronze and
	// PodMonitor/haade-flink, and has HAADE's series and Flink's, with the
	// labels the PodMonitors give (job namespace/name, namespace, pod).
	const bronzeTargets = `job="lakehouse/bronze",namespace="lakehouse",pod=~"haade-flink-taskmanager-.+"`
	const table = `table="lakehouse.bronze_events"`
	pr.series(3*time.Minute, [][2]string{
		{"bronze's workers scraped (PodMonitor/bronze)", `up{` + bronzeTargets + `,endpoint="bronze-metrics"} == 1`},
		{"the JobManager scraped (PodMonitor/haade-flink)", `up{job="lakehouse/haade-flink",pod!~"haade-flink-taskmanager-.+",endpoint="flink-metrics"} == 1`},
		{"the TaskManagers scraped (PodMonitor/haade-flink)", `up{job="lakehouse/haade-flink",pod=~"haade-flink-taskmanager-.+",endpoint="flink-metrics"} == 1`},
		{"commits", `haade_commits_total{` + bronzeTargets + `,` + table + `,outcome="committed"} > 0`},
		{"every row written", `sum(haade_rows_written_total{` + bronzeTargets + `,` + table + `}) >= 3000`},
		{"every record read", `sum(haade_kafka_records_read_total{` + bronzeTargets + `,topic="fintech.debt.raw"}) >= 3000`},
		{"the lag, caught up", `sum(haade_kafka_consumer_lag{` + bronzeTargets + `,topic="fintech.debt.raw"}) == 0`},
		{"freshness", `sum(haade_freshness_seconds_count{` + bronzeTargets + `,` + table + `}) > 0`},
		{"a recent commit", `min(haade_seconds_since_last_commit{` + bronzeTargets + `,` + table + `}) < 60`},
		{"each worker's commit clock", `haade_seconds_since_last_commit{` + bronzeTargets + `}`},
		{"Flink's job uptime", `flink_jobmanager_job_uptime{job="lakehouse/haade-flink",namespace="lakehouse",job_name=~"bronze_.+"} > 0`},
		{"Flink's restarts, none", `flink_jobmanager_job_numRestarts{job="lakehouse/haade-flink",job_name=~"bronze_.+"} == 0`},
	})
	// Before the job ran, it was not running: that alert resolves now.
	alerts.resolved(t, k, "HaadeFlinkJobNotRunning", time.Now(), 2*time.Minute)
	if s := alerts.now("HaadeFlinkJobRestarting"); s != "inactive" {
		t.Errorf("HaadeFlinkJobRestarting is %s before any restart", s)
	}

	// 4. Delete a TaskManager pod while producing: Flink's JobManager asks for a new
	// one, and the job restores from its S3 checkpoint.
	waitFor(t, k, 5*time.Minute, "a checkpoint completed on S3", func() (bool, string) {
		c := fl.checkpoints(j1.ID)
		if c.Latest.Completed == nil {
			return false, fmt.Sprintf("%+v", c.Counts)
		}
		return strings.HasPrefix(c.Latest.Completed.ExternalPath, "s3://warehouse/checkpoints/bronze/"), c.Latest.Completed.ExternalPath
	})
	pr.series(2*time.Minute, [][2]string{{"Flink's completed checkpoints",
		`flink_jobmanager_job_numberOfCompletedCheckpoints{job="lakehouse/haade-flink",job_id="` + j1.ID + `"} > 0`}})
	before := fl.checkpoints(j1.ID)
	produce(t, k, "produce-2", 4000, 200, 2)
	waitFor(t, k, 3*time.Minute, "the second batch is being produced", func() (bool, string) {
		s := k.jsonpath("lakehouse", "job/produce-2", "{.status.active}")
		return s == "1", "active=" + s
	})
	tms := k.must(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=taskmanager", "-o", "name")
	tm := strings.Fields(tms)
	if len(tm) == 0 {
		t.Fatal("no TaskManager pod")
	}
	k.must(2*time.Minute, "-n", "lakehouse", "delete", tm[0], "--wait=false")
	tmDeleted := time.Now()
	t.Logf("deleted %s (checkpoint %d completed before)", tm[0], before.Latest.Completed.ID)
	jobDone(t, k, "lakehouse", "produce-2", 10*time.Minute)
	want += 4000
	j2 := fl.runningJob(15*time.Minute, "the Flink job runs every task again after the TaskManager's deletion")
	if j2.ID != j1.ID {
		t.Fatalf("after the TaskManager's deletion the job is %s, not %s: Flink should have restarted it", j2.ID, j1.ID)
	}
	waitFor(t, k, 5*time.Minute, "Flink restored the job from its S3 checkpoint", func() (bool, string) {
		c := fl.checkpoints(j1.ID)
		if c.Latest.Restored == nil {
			return false, fmt.Sprintf("no restore yet: %+v", c.Counts)
		}
		return c.Counts.Restored > before.Counts.Restored && strings.HasPrefix(c.Latest.Restored.ExternalPath, "s3://warehouse/checkpoints/bronze/"),
			fmt.Sprintf("restored %d times, last checkpoint %d from %s", c.Counts.Restored, c.Latest.Restored.ID, c.Latest.Restored.ExternalPath)
	})
	waitFor(t, k, 15*time.Minute, "both batches landed exactly once after the TaskManager's deletion", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})
	// Flink counted the restart, and the restart alert fired from that series
	// (the test's threshold: one restart in 3 minutes). It resolves 3 minutes
	// later, checked before the rollout.
	pr.series(time.Minute, [][2]string{{"Flink's restart",
		`flink_jobmanager_job_numRestarts{job="lakehouse/haade-flink",job_id="` + j1.ID + `"} >= 1`}})
	alerts.wait(t, k, "HaadeFlinkJobRestarting", "firing", tmDeleted, 5*time.Minute)

	// 5. Delete the JobManager pod: its Deployment brings a new one, which recovers
	// the same job from Kubernetes HA (ConfigMap leader election, S3 HA storage).
	jm := strings.Fields(k.must(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=jobmanager", "-o", "name"))
	if len(jm) != 1 {
		t.Fatalf("JobManager pods: %v", jm)
	}
	k.must(2*time.Minute, "-n", "lakehouse", "delete", jm[0], "--wait=false")
	jmDeleted := time.Now()
	t.Logf("deleted %s", jm[0])
	// Until the old pod is gone, the REST Service may still reach it: wait for the
	// new JobManager pod to be Ready before asking Flink anything.
	waitFor(t, k, 10*time.Minute, "a new JobManager pod is Ready", func() (bool, string) {
		out, _ := k.run(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=jobmanager",
			"-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
		f := strings.Fields(out)
		return len(f) == 1 && !strings.HasPrefix("pod/"+f[0], jm[0]+"=") && strings.HasSuffix(f[0], "=True"), out
	})
	j3 := fl.runningJob(15*time.Minute, "the job runs again after the JobManager's deletion")
	if j3.ID != j1.ID {
		t.Fatalf("after the JobManager's deletion the job is %s, not %s: Kubernetes HA should have recovered it", j3.ID, j1.ID)
	}
	produce(t, k, "produce-3", 1000, 0, 3)
	jobDone(t, k, "lakehouse", "produce-3", 10*time.Minute)
	want += 1000
	waitFor(t, k, 10*time.Minute, "every record landed exactly once after the JobManager's deletion", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})

	// 6. Delete the Kafka pod: the StatefulSet brings it back on the same volume,
	// and bronze waits, then goes on.
	k.must(2*time.Minute, "-n", "kafka", "delete", "pod", "recovery-kafka-dual-role-0", "--wait=false")
	t.Log("deleted pod kafka/recovery-kafka-dual-role-0")
	produce(t, k, "produce-4", 1000, 0, 4)
	jobDone(t, k, "lakehouse", "produce-4", 10*time.Minute)
	want += 1000
	waitFor(t, k, 10*time.Minute, "every record landed exactly once after Kafka's deletion", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})
	if j := fl.runningJob(5*time.Minute, "still the one job after Kafka's deletion"); j.ID != j1.ID {
		t.Errorf("the running job is %s, want %s", j.ID, j1.ID)
	}

	// 7. A second submit Job, as a re-sync would make it, starts no second job.
	jobsBefore, err := fl.jobs()
	if err != nil {
		t.Fatal(err)
	}
	k.must(2*time.Minute, "-n", "lakehouse", "delete", "job", "bronze-submit", "--wait=true")
	k.apply(k.render(nil))
	jobDone(t, k, "lakehouse", "bronze-submit", 10*time.Minute)
	if l := k.logs("lakehouse", "bronze-submit"); !strings.Contains(l, "already runs") {
		t.Errorf("the second submit Job did not find the running job:\n%s", l)
	}
	jobsAfter, err := fl.jobs()
	if err != nil {
		t.Fatal(err)
	}
	ids := func(js []job) []string {
		var out []string
		for _, j := range js {
			out = append(out, j.ID+" "+j.State)
		}
		return out
	}
	if diff := cmp.Diff(ids(jobsBefore), ids(jobsAfter)); diff != "" {
		t.Errorf("the second submit Job changed Flink's jobs (-before +after):\n%s", diff)
	}

	alerts.resolved(t, k, "HaadeFlinkJobRestarting", tmDeleted, 10*time.Minute)
	// The job runs, and the topic has been quiet for minutes: neither fires.
	for _, a := range []string{"HaadeNoCommit", "HaadeFlinkJobNotRunning"} {
		if s := alerts.now(a); s == "firing" {
			t.Errorf("%s is firing before the job is cancelled", a)
		}
	}

	// 8. Roll out a new image tag as k8s/README.md's "Upgrading the pipeline" says:
	// cancel the Flink job, delete the submit Job, apply with the new tag. The
	// operator redeploys the session cluster (its TaskManagers' sidecar changed), the
	// new submit Job submits a new job, and it resumes from the table's offsets.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	if err := fl.rest().Cancel(ctx, j1.ID, 2*time.Minute); err != nil {
		cancel()
		t.Fatalf("cancel the Flink job: %v", err)
	}
	cancel()
	cancelled := time.Now()
	// The Jobs whose pod template the new tag changes are replaced, as Argo CD's
	// Replace=true does: a Job's template is immutable.
	k.must(2*time.Minute, "-n", "lakehouse", "delete", "job", "bronze-submit", "minio-bucket", "minio-pipeline-user", "--wait=true")
	k.apply(k.render(map[string]string{"localhost/haade:dev": rolloutImage}))
	t.Logf("applied %s with %s", overlay, rolloutImage)
	produce(t, k, "produce-5", 1000, 0, 5)
	jobDone(t, k, "lakehouse", "produce-5", 10*time.Minute)
	want += 1000
	jobDone(t, k, "lakehouse", "bronze-submit", 20*time.Minute)
	// While no job ran, the alerts fired from the series that stopped: Flink's
	// job uptime went absent (HaadeFlinkJobNotRunning, after 2 minutes), and
	// the idle TaskManagers, released, took the workers' commit clocks with
	// them (HaadeNoCommit, its production thresholds). The operator's
	// redeployment and the new submission take longer than that, so the test
	// waits for them here rather than before the apply.
	alerts.wait(t, k, "HaadeFlinkJobNotRunning", "firing", cancelled, 6*time.Minute)
	alerts.wait(t, k, "HaadeNoCommit", "firing", cancelled, 6*time.Minute)
	j4 := fl.runningJob(15*time.Minute, "the new version's job runs every task")
	if j4.ID == j1.ID {
		t.Fatalf("after the rollout the job is still %s", j1.ID)
	}
	waitFor(t, k, 15*time.Minute, "every record landed exactly once after the rollout", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})
	landed := time.Now()
	alerts.resolved(t, k, "HaadeFlinkJobNotRunning", landed, 5*time.Minute)
	alerts.resolved(t, k, "HaadeNoCommit", landed, 5*time.Minute)
	images := k.must(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=taskmanager",
		"-o", `jsonpath={.items[*].spec.containers[?(@.name=="beam-worker-pool")].image}`)
	if !strings.Contains(images, rolloutImage) || strings.Contains(images, "localhost/haade:dev") {
		t.Errorf("after the rollout the TaskManagers' worker pools run %q, want %s", images, rolloutImage)
	}

	// Nothing went to the dead-letter table: every event was well formed.
	if dlq := rows[tables.DeadLetter](t, cat, "lakehouse.bronze_events_dlq"); len(dlq) != 0 {
		t.Errorf("%d dead letters, want 0", len(dlq))
	}

	// Checkpoints failed while tasks started (the first deployment, the
	// TaskManager's replacement) and completed between: until the
	// JobManager's deletion, HaadeFlinkCheckpointsFailing never fired. After
	// the JobManager's and Kafka's deletions checkpoints do fail for minutes
	// (seen: pending 3.5 minutes, until the rollout's cancel), which is what
	// the alert is for: logged, not failed.
	if at, ok := alerts.seen("HaadeFlinkCheckpointsFailing", "firing", t0); ok {
		if at.Before(jmDeleted) {
			t.Errorf("HaadeFlinkCheckpointsFailing fired %v after the overlay was applied, before the JobManager's deletion, though checkpoints completed", at.Sub(t0).Round(time.Second))
		} else {
			t.Logf("HaadeFlinkCheckpointsFailing fired %v after the overlay was applied, %v after the JobManager's deletion", at.Sub(t0).Round(time.Second), at.Sub(jmDeleted).Round(time.Second))
		}
	}

	// The dashboard users import into their Grafana, drawn from this run's
	// series: every panel has data but the dead letters' (there are none).
	png := os.Getenv("HAADE_DASHBOARD_PNG")
	if png == "" {
		png = filepath.Join(t.TempDir(), "dashboard.png")
	}
	for _, title := range pr.dashboard(png, t0, time.Now()) {
		if title != "Dead letters" {
			t.Errorf("the dashboard's panel %q has no data", title)
		}
	}
	t.Logf("the whole run took %v", time.Since(t0).Round(time.Second))
}
