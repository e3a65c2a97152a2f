//go:build cluster && skaffold

package k8se2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/transforms/tables"
)

// TestSkaffoldDev runs `skaffold dev -p node` on the real node, as a developer
// runs it: Skaffold builds every image of k8s/overlays/skaffold-node with podman
// (testing/cluster/images.sh skaffold), loads them into the node, deploys, and
// bronze runs. Then a saved change of bronze's source is built and rolled out:
// the profile's hook deletes the Jobs, the new submit Job runs the new build and
// replaces the Flink job (--replace), the TaskManagers' worker pools run the new
// image, no second job runs, and every record lands exactly once. It logs the
// time from the save to the new job running every task.
func TestSkaffoldDev(t *testing.T) {
	k := newKube(t)
	bin := os.Getenv("HAADE_SKAFFOLD")
	if bin == "" {
		t.Skip("no skaffold binary (HAADE_SKAFFOLD): .ci/cluster skaffold builds one (k8s/validate.sh tools)")
	}
	if os.Getenv("DOCKER_HOST") == "" {
		t.Skip("no Docker API (DOCKER_HOST) for Skaffold's local builder: .ci/cluster skaffold starts podman's")
	}
	t0 := time.Now()
	installPlatform(t, k)

	// Skaffold works on a copy of the working tree, which the test edits.
	src := newRepo(t, "")
	logPath := filepath.Join(os.Getenv("HAADE_RUN"), "skaffold-dev.log")
	if os.Getenv("HAADE_RUN") == "" {
		logPath = filepath.Join(t.TempDir(), "skaffold-dev.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	// --cache-artifacts=false: a fresh node holds none of the images, and only a
	// build loads one. --cleanup=false: the node is torn down after the test.
	dev := exec.Command(bin, "dev", "-p", "node", "--cache-artifacts=false", "--cleanup=false", "--tail=false")
	dev.Dir = src.dir
	dev.Env = append(os.Environ(), "SKAFFOLD_UPDATE_CHECK=false", "SKAFFOLD_INTERACTIVE=false",
		"PATH="+filepath.Dir(k.bin)+string(os.PathListSeparator)+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dev.Stdout, dev.Stderr = logFile, logFile
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	t.Cleanup(func() {
		// Ctrl-C, as a developer stops it; then its whole process group.
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("skaffold dev's output (%s), its end:\n%s", logPath, cmdtest.TailFile(logPath, 80))
		}
	})
	// watching waits for the n-th "Watching for changes..." of Skaffold: a
	// deploy whose resources stabilized.
	watching := func(n int, d time.Duration, what string) {
		t.Helper()
		waitFor(t, k, d, what, func() (bool, string) {
			select {
			case err := <-exited:
				t.Fatalf("skaffold dev exited: %v\n%s", err, cmdtest.TailFile(logPath, 80))
			default:
			}
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Count(string(b), "Watching for changes...")
			return got >= n, fmt.Sprintf("%d deploys of %d; last line: %s", got, n, cmdtest.Tail(string(b), 1))
		})
	}

	// 1. The first deploy: every image built and loaded, the overlay applied, and
	// bronze submitted.
	watching(1, 30*time.Minute, "skaffold dev built, loaded and deployed skaffold-node")
	fl := flink{t: t, k: k}
	cat := lakehouse(t, k)
	bronze := func() []tables.BronzeEvent { return rows[tables.BronzeEvent](t, cat, "lakehouse.bronze_events") }
	j1 := fl.runningJob(20*time.Minute, "the Flink job Skaffold's submit Job started runs every task")
	t.Logf("from skaffold dev's start to the job running: %v", time.Since(t0).Round(time.Second))
	submit1 := k.jsonpath("lakehouse", "job/bronze-submit", "{.metadata.uid}")
	image1 := workerImages(k)
	produce(t, k, "produce-1", 2000, 0, 1)
	jobDone(t, k, "lakehouse", "produce-1", 10*time.Minute)
	want := 2000
	waitFor(t, k, 10*time.Minute, "the first batch landed exactly once", func() (bool, string) { return exactlyOnce(bronze(), want) })

	// 2. A saved change of bronze's source: its start line gains an attribute,
	// so the new build is seen running in the submit Job's log.
	mark := fmt.Sprintf("skaffold-dev-%d", time.Now().Unix())
	src.edit("pipelines/bronze/main.go", `"commit_interval", cfg.CommitInterval}`,
		fmt.Sprintf(`"commit_interval", cfg.CommitInterval, "build", %q}`, mark))
	saved := time.Now()
	watching(2, 30*time.Minute, "skaffold dev rebuilt and deployed the change")
	t.Logf("from the save to the deploy stabilized: %v", time.Since(saved).Round(time.Second))
	var j2 job
	waitFor(t, k, 20*time.Minute, "a new Flink job runs every task, the only one", func() (bool, string) {
		js, err := fl.jobs()
		if err != nil {
			return false, err.Error()
		}
		var active []job
		for _, j := range js {
			if j.State != "CANCELED" && j.State != "FINISHED" && j.State != "FAILED" {
				active = append(active, j)
			}
		}
		if len(active) != 1 || active[0].ID == j1.ID || active[0].State != "RUNNING" {
			return false, fmt.Sprintf("active jobs %+v", active)
		}
		j2 = active[0]
		return j2.Tasks["running"] == j2.Tasks["total"], fmt.Sprintf("job %s: %d of %d tasks running", j2.ID, j2.Tasks["running"], j2.Tasks["total"])
	})
	t.Logf("from the save to the new Flink job running every task: %v", time.Since(saved).Round(time.Second))
	if uid := k.jsonpath("lakehouse", "job/bronze-submit", "{.metadata.uid}"); uid == submit1 || uid == "" {
		t.Fatalf("the submit Job was not re-created (uid %q, before %q)", uid, submit1)
	}
	// The Job's last attempt says the job runs a poll after Flink's REST API
	// shows it RUNNING: its log is whole once the Job succeeded.
	jobDone(t, k, "lakehouse", "bronze-submit", 5*time.Minute)
	log := k.logs("lakehouse", "bronze-submit")
	for _, want := range []string{mark, "--replace: cancelling the running Flink job", "--async: the Flink job runs"} {
		if !strings.Contains(log, want) {
			t.Errorf("the new submit Job's log lacks %q:\n%s", want, log)
		}
	}
	if image2 := workerImages(k); image2 == image1 || strings.Contains(image2, image1) {
		t.Errorf("after the change the TaskManagers' worker pools run %q, as before", image2)
	}
	produce(t, k, "produce-2", 1000, 0, 2)
	jobDone(t, k, "lakehouse", "produce-2", 10*time.Minute)
	want += 1000
	waitFor(t, k, 15*time.Minute, "every record landed exactly once after the rollout", func() (bool, string) {
		return exactlyOnce(bronze(), want)
	})
	if dlq := rows[tables.DeadLetter](t, cat, "lakehouse.bronze_events_dlq"); len(dlq) != 0 {
		t.Errorf("%d dead letters, want 0", len(dlq))
	}
	t.Logf("the whole run took %v", time.Since(t0).Round(time.Second))
}

// workerImages is the image of the worker pools of the running TaskManagers.
func workerImages(k kube) string {
	return strings.TrimSpace(k.must(time.Minute, "-n", "lakehouse", "get", "pods", "-l", "app=haade-flink,component=taskmanager",
		"--field-selector=status.phase=Running", "-o", `jsonpath={.items[*].spec.containers[?(@.name=="beam-worker-pool")].image}`))
}
