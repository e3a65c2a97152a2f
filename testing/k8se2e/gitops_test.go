//go:build cluster && gitops

package k8se2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/transforms/tables"
	"sigs.k8s.io/yaml"
)

// object is what identifies a rendered object.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// documents splits rendered YAML into its documents, each with its identity.
func documents(t *testing.T, rendered string) (docs []string, ids []object) {
	t.Helper()
	for _, d := range strings.Split(rendered, "\n---\n") {
		if strings.TrimSpace(d) == "" {
			continue
		}
		var o object
		if err := yaml.Unmarshal([]byte(d), &o); err != nil {
			t.Fatalf("a rendered document: %v\n%s", err, d)
		}
		docs, ids = append(docs, d), append(ids, o)
	}
	return docs, ids
}

// tagImage gives the HAADE image the commit's tag in the node's containerd, as
// CI pushes an image per commit: haade-dev deploys localhost/haade:COMMIT.
func tagImage(t *testing.T, sock, from, commit string) string {
	t.Helper()
	to := "localhost/haade:" + commit
	out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "tag", "--force", from, to).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr images tag %s %s: %v\n%s", from, to, err, out)
	}
	return to
}

// app is the Application's state as Argo CD reports it.
type app struct {
	Sync struct {
		Status   string `json:"status"`
		Revision string `json:"revision"`
	} `json:"sync"`
	Health struct {
		Status string `json:"status"`
	} `json:"health"`
	OperationState struct {
		Phase      string `json:"phase"`
		Message    string `json:"message"`
		StartedAt  string `json:"startedAt"`
		FinishedAt string `json:"finishedAt"`
		Operation  struct {
			InitiatedBy struct {
				Automated bool `json:"automated"`
			} `json:"initiatedBy"`
			Sync struct {
				Revision string `json:"revision"`
			} `json:"sync"`
		} `json:"operation"`
	} `json:"operationState"`
	Conditions []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"conditions"`
}

func (k kube) app(name string) (app, string) {
	var a struct {
		Status app `json:"status"`
	}
	out, err := k.run(30*time.Second, "-n", "argocd", "get", "application", name, "-o", "json")
	if err != nil {
		return app{}, err.Error()
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		return app{}, err.Error()
	}
	s := a.Status
	msg := fmt.Sprintf("sync %s at %.7s, health %s, operation %s %q", s.Sync.Status, s.Sync.Revision, s.Health.Status, s.OperationState.Phase, s.OperationState.Message)
	for _, c := range s.Conditions {
		msg += fmt.Sprintf("; %s: %s", c.Type, c.Message)
	}
	return s, msg
}

// synced waits until Argo CD synced the Application at commit and it is healthy.
func synced(t *testing.T, k kube, name, commit string, d time.Duration) {
	t.Helper()
	waitFor(t, k, d, fmt.Sprintf("Argo CD synced %s at %.7s, Healthy", name, commit), func() (bool, string) {
		a, msg := k.app(name)
		return a.Sync.Status == "Synced" && a.Sync.Revision == commit && a.Health.Status == "Healthy" &&
			a.OperationState.Phase == "Succeeded" && a.OperationState.Operation.Sync.Revision == commit, msg
	})
}

// argocdDebug logs what helps to see why Argo CD did not sync.
func argocdDebug(k kube) {
	for _, args := range [][]string{
		{"-n", "argocd", "get", "pods", "-o", "wide"},
		{"-n", "argocd", "get", "application", "haade-dev", "-o", "yaml"},
		{"-n", "argocd", "logs", "statefulset/argocd-application-controller", "--tail=80"},
		{"-n", "argocd", "logs", "deploy/argocd-repo-server", "--tail=60"},
		{"-n", "argocd", "logs", "deploy/argocd-server", "--tail=20"},
		{"-n", "argocd", "logs", "deploy/haade-git", "--tail=20"},
	} {
		out, err := k.run(time.Minute, args...)
		k.t.Logf("kubectl %s:\n%s%v", strings.Join(args, " "), out, err)
	}
}

// TestGitOps runs Argo CD on the real node and lets it deploy bronze from git:
// k8s/argocd's haade-dev Application (k8s/argocd-node: pointed at a git server
// in the cluster) syncs k8s/overlays/node-dev; a pushed commit (a ConfigMap
// value, and the image tag of the commit) is synced with the submit Job
// replaced and the Flink job replaced, not doubled, and every record lands
// exactly once; a manual edit is undone by self-heal.
func TestGitOps(t *testing.T) {
	k := newKube(t)
	sock := os.Getenv("HAADE_NODE_CONTAINERD")
	if sock == "" {
		t.Skip("no containerd socket of the node (HAADE_NODE_CONTAINERD) to tag each commit's image in; .ci/gitops sets it")
	}
	t0 := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			argocdDebug(k)
		}
	})

	// 1. What a platform team installs before any pipeline: the CRDs, the Flink and
	// Prometheus operators (the node overlay's objects outside node-dev), Argo CD,
	// and the Kafka Secrets (the component's secrets.sh).
	installPlatform(t, k, "k8s/crds/argocd-application.yaml", "k8s/crds/argocd-appproject.yaml")
	app := map[object]bool{}
	_, appIDs := documents(t, k.kustomize("k8s/overlays/node-dev"))
	for _, o := range appIDs {
		app[o] = true
	}
	var platform []string
	nodeDocs, nodeIDs := documents(t, k.kustomize(overlay))
	for i, o := range nodeIDs {
		if !app[o] {
			platform = append(platform, nodeDocs[i])
		}
	}
	// secrets.sh (installPlatform) made the namespaces kafka and lakehouse, where
	// the Flink operator's Role (part of the platform) lives too.
	k.apply(strings.Join(platform, "\n---\n"))
	k.apply(k.kustomize("k8s/operators/argocd"))
	// The git server first: the Application comes once it has a commit to sync.
	bootDocs, bootIDs := documents(t, k.kustomize("k8s/argocd-node"))
	var gitServer, apps []string
	for i, o := range bootIDs {
		if o.Kind == "Application" || o.Kind == "AppProject" {
			apps = append(apps, bootDocs[i])
		} else {
			gitServer = append(gitServer, bootDocs[i])
		}
	}
	k.apply(strings.Join(gitServer, "\n---\n"))
	for _, d := range []string{"deploy/argocd-redis", "deploy/argocd-repo-server", "deploy/argocd-server", "statefulset/argocd-application-controller", "deploy/haade-git"} {
		waitFor(t, k, 10*time.Minute, "argocd "+d+" ready", func() (bool, string) {
			s := k.jsonpath("argocd", d, "{.status.readyReplicas}/{.status.replicas}")
			return s == "1/1", "ready " + s
		})
	}
	t.Logf("Argo CD and the operators installed in %v", time.Since(t0).Round(time.Second))

	// Argo CD's API server answers, as the argocd CLI would reach it.
	// (Polled: kube-proxy routes a Service a moment after its pod is Ready.)
	apiServer := "http://" + k.jsonpath("argocd", "svc/argocd-server", "{.spec.clusterIP}")
	waitFor(t, k, 2*time.Minute, "Argo CD's API server says its version", func() (bool, string) {
		var version struct{ Version string }
		if err := getJSON(apiServer+"/api/version", &version); err != nil {
			return false, err.Error()
		}
		if !strings.HasPrefix(version.Version, "v3.6.1") {
			t.Fatalf("Argo CD's API server says version %q, want v3.6.1", version.Version)
		}
		return true, version.Version
	})

	// 2. Push this repository to the git server, tag the image of that commit, and
	// apply the project and haade-dev: Argo CD deploys node-dev from git.
	r := newRepo(t, "http://"+k.jsonpath("argocd", "svc/haade-git", "{.spec.clusterIP}")+"/haade.git")
	waitFor(t, k, 2*time.Minute, "the git server answers through its Service", func() (bool, string) {
		out, err := exec.Command("git", "ls-remote", r.remote).CombinedOutput()
		return err == nil, fmt.Sprintf("%v %s", err, out)
	})
	c1 := r.git("rev-parse", "HEAD")
	image1 := tagImage(t, sock, "localhost/haade:dev", c1)
	r.push()
	k.apply(strings.Join(apps, "\n---\n"))
	applied := time.Now()
	synced(t, k, "haade-dev", c1, 25*time.Minute)
	t.Logf("from the Application's apply to Synced and Healthy: %v", time.Since(applied).Round(time.Second))

	fl := flink{t: t, k: k}
	cat := lakehouse(t, k)
	bronze := func() []tables.BronzeEvent { return rows[tables.BronzeEvent](t, cat, "lakehouse.bronze_events") }
	if l := k.logs("lakehouse", "bronze-submit"); !strings.Contains(l, "--async: the Flink job runs") {
		t.Fatalf("bronze-submit did not say the job runs:\n%s", l)
	}
	j1 := fl.runningJob(10*time.Minute, "the Flink job Argo CD's submit Job started runs every task")
	produce(t, k, "produce-1", 2000, 0, 1)
	jobDone(t, k, "lakehouse", "produce-1", 10*time.Minute)
	want := 2000
	waitFor(t, k, 10*time.Minute, "the first batch landed exactly once", func() (bool, string) { return exactlyOnce(bronze(), want) })
	submit1 := k.jsonpath("lakehouse", "job/bronze-submit", "{.metadata.uid}")

	// 3. A commit: bronze commits every 5 s instead of 10. Its image is tagged with
	// the commit, so the submit Job and the TaskManagers' worker pools change too.
	r.edit("k8s/base/lakehouse/bronze-config.yaml", "HAADE_COMMIT_INTERVAL: 10s", "HAADE_COMMIT_INTERVAL: 5s")
	c2 := r.commit("bronze: commit every 5 s")
	image2 := tagImage(t, sock, "localhost/haade:rollout", c2)
	r.push()
	pushed := time.Now()
	// What a webhook from the git host does: ask for a refresh now rather than at
	// the next poll (timeout.reconciliation).
	k.must(time.Minute, "-n", "argocd", "annotate", "application", "haade-dev", "argocd.argoproj.io/refresh=normal", "--overwrite")
	synced(t, k, "haade-dev", c2, 25*time.Minute)
	t.Logf("from the push to Synced and Healthy: %v", time.Since(pushed).Round(time.Second))

	if v := k.jsonpath("lakehouse", "configmap/bronze-config", "{.data.HAADE_COMMIT_INTERVAL}"); v != "5s" {
		t.Errorf("bronze-config HAADE_COMMIT_INTERVAL = %q after the sync, want 5s", v)
	}
	if uid := k.jsonpath("lakehouse", "job/bronze-submit", "{.metadata.uid}"); uid == submit1 || uid == "" {
		t.Errorf("the submit Job was not replaced (uid %q, before %q)", uid, submit1)
	}
	if img := k.jsonpath("lakehouse", "job/bronze-submit", "{.spec.template.spec.containers[0].image}"); img != image2 {
		t.Errorf("the new submit Job runs %q, want %s", img, image2)
	}
	j2 := fl.runningJob(15*time.Minute, "the new version's Flink job runs every task")
	if j2.ID == j1.ID {
		t.Fatalf("after the commit the Flink job is still %s", j1.ID)
	}
	js, err := fl.jobs()
	if err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, j := range js {
		if j.State != "CANCELED" && j.State != "FINISHED" && j.State != "FAILED" {
			active++
		}
	}
	if active != 1 {
		t.Errorf("%d active Flink jobs after the commit, want 1: %+v", active, js)
	}
	t.Logf("bronze-submit after the commit:\n%s", k.logs("lakehouse", "bronze-submit"))
	images := k.must(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=taskmanager",
		"-o", `jsonpath={.items[*].spec.containers[?(@.name=="beam-worker-pool")].image}`)
	if !strings.Contains(images, image2) || strings.Contains(images, image1) {
		t.Errorf("after the commit the TaskManagers' worker pools run %q, want %s", images, image2)
	}
	produce(t, k, "produce-2", 1000, 0, 2)
	jobDone(t, k, "lakehouse", "produce-2", 10*time.Minute)
	want += 1000
	waitFor(t, k, 15*time.Minute, "every record landed exactly once after the commit's rollout", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})

	// 4. A manual edit of what git holds: self-heal puts git's value back, and
	// touches nothing else (the Flink job keeps running).
	before, _ := k.app("haade-dev")
	k.must(time.Minute, "-n", "lakehouse", "patch", "configmap", "bronze-config", "--type=merge",
		"-p", `{"data":{"HAADE_COMMIT_INTERVAL":"1h"}}`)
	edited := time.Now()
	waitFor(t, k, 5*time.Minute, "self-heal restored HAADE_COMMIT_INTERVAL from git", func() (bool, string) {
		v := k.jsonpath("lakehouse", "configmap/bronze-config", "{.data.HAADE_COMMIT_INTERVAL}")
		return v == "5s", "HAADE_COMMIT_INTERVAL=" + v
	})
	t.Logf("self-heal took %v", time.Since(edited).Round(time.Second))
	after, msg := k.app("haade-dev")
	if !after.OperationState.Operation.InitiatedBy.Automated || after.OperationState.StartedAt == before.OperationState.StartedAt {
		t.Errorf("no automated sync after the edit: %s", msg)
	}
	if j := fl.runningJob(5*time.Minute, "the same Flink job after self-heal"); j.ID != j2.ID {
		t.Errorf("after self-heal the Flink job is %s, want %s", j.ID, j2.ID)
	}
	if dlq := rows[tables.DeadLetter](t, cat, "lakehouse.bronze_events_dlq"); len(dlq) != 0 {
		t.Errorf("%d dead letters, want 0", len(dlq))
	}
	t.Logf("the whole run took %v", time.Since(t0).Round(time.Second))
}

// getJSON decodes a GET's JSON body.
func getJSON(url string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
