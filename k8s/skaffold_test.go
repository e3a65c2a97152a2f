package k8s_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
	corev1 "k8s.io/api/core/v1"
)

// skaffoldConfig mirrors the part of Skaffold's skaffold/v4beta13 schema
// that skaffold.yaml uses (field names from Skaffold v2.16's
// pkg/skaffold/schema/latest). Decoding is strict, so a misspelt or
// misplaced field fails here; fields the schema has but this file does not
// use fail too, and must be added below before use.
type skaffoldConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	skaffoldPipeline
	Profiles []struct {
		Name       string `json:"name"`
		Activation []struct {
			Command string `json:"command,omitempty"`
			Env     string `json:"env,omitempty"`
		} `json:"activation,omitempty"`
		skaffoldPipeline
	} `json:"profiles"`
}

type skaffoldPipeline struct {
	Build *struct {
		Platforms []string            `json:"platforms,omitempty"`
		TagPolicy map[string]struct{} `json:"tagPolicy,omitempty"`
		Local     *struct {
			Push        *bool `json:"push,omitempty"`
			UseBuildkit *bool `json:"useBuildkit,omitempty"`
		} `json:"local,omitempty"`
		Artifacts []struct {
			Image   string `json:"image"`
			Context string `json:"context,omitempty"`
			Docker  *struct {
				Dockerfile string `json:"dockerfile,omitempty"`
			} `json:"docker,omitempty"`
			Custom *struct {
				BuildCommand string `json:"buildCommand,omitempty"`
				Dependencies *struct {
					Paths []string `json:"paths,omitempty"`
				} `json:"dependencies,omitempty"`
			} `json:"custom,omitempty"`
		} `json:"artifacts,omitempty"`
	} `json:"build,omitempty"`
	Manifests *struct {
		Kustomize *struct {
			Paths []string `json:"paths,omitempty"`
		} `json:"kustomize,omitempty"`
	} `json:"manifests,omitempty"`
	ResourceSelector *struct {
		Allow []struct {
			GroupKind string   `json:"groupKind"`
			Image     []string `json:"image,omitempty"`
			Labels    []string `json:"labels,omitempty"`
		} `json:"allow,omitempty"`
	} `json:"resourceSelector,omitempty"`
	Deploy *struct {
		Kubectl *struct {
			Flags struct {
				Apply []string `json:"apply,omitempty"`
			} `json:"flags,omitempty"`
			Hooks *struct {
				Before []skaffoldHook `json:"before,omitempty"`
				After  []skaffoldHook `json:"after,omitempty"`
			} `json:"hooks,omitempty"`
		} `json:"kubectl,omitempty"`
		StatusCheckDeadlineSeconds    int  `json:"statusCheckDeadlineSeconds,omitempty"`
		TolerateFailuresUntilDeadline bool `json:"tolerateFailuresUntilDeadline,omitempty"`
	} `json:"deploy,omitempty"`
	PortForward []struct {
		ResourceType string `json:"resourceType"`
		ResourceName string `json:"resourceName"`
		Namespace    string `json:"namespace,omitempty"`
		Port         int    `json:"port"`
		LocalPort    int    `json:"localPort,omitempty"`
	} `json:"portForward,omitempty"`
}

// skaffoldHook is a deploy hook; HAADE's run on the host.
type skaffoldHook struct {
	Host *struct {
		Command []string `json:"command"`
		OS      []string `json:"os,omitempty"`
		Dir     string   `json:"dir,omitempty"`
	} `json:"host,omitempty"`
}

// TestSkaffold checks skaffold.yaml against the schema subset above and
// against what it refers to: the Dockerfile, the overlays, the image name
// the manifests use, and the services it port-forwards.
func TestSkaffold(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), "skaffold.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c skaffoldConfig
	if err := decodeStrict(raw, &c); err != nil {
		t.Fatalf("skaffold.yaml: %v", err)
	}
	if c.APIVersion != "skaffold/v4beta13" || c.Kind != "Config" {
		t.Errorf("skaffold.yaml: %s %s, want skaffold/v4beta13 Config", c.APIVersion, c.Kind)
	}
	pipelines := map[string]skaffoldPipeline{"": c.skaffoldPipeline}
	for _, p := range c.Profiles {
		pipelines[p.Name] = p.skaffoldPipeline
	}
	for _, want := range []string{"dev", "prod", "node"} {
		if _, ok := pipelines[want]; !ok {
			t.Errorf("skaffold.yaml: no profile %s", want)
		}
	}
	// The image each overlay's workloads use must be a Skaffold artifact.
	// node builds every image its overlay runs, the operator's, Kafka's,
	// MinIO's and PostgreSQL's too: the node pulls from no registry.
	for profile, overlay := range map[string]string{"": "overlays/skaffold-dev", "prod": "overlays/prod", "node": "overlays/skaffold-node"} {
		p := pipelines[profile]
		if p.Manifests == nil || p.Manifests.Kustomize == nil || len(p.Manifests.Kustomize.Paths) != 1 || p.Manifests.Kustomize.Paths[0] != "k8s/"+overlay {
			t.Errorf("profile %q: manifests.kustomize.paths should be [k8s/%s]", profile, overlay)
			continue
		}
		if p.Build == nil || len(p.Build.Artifacts) == 0 {
			t.Errorf("profile %q: no build artifacts", profile)
			continue
		}
		images := map[string]bool{}
		for _, a := range p.Build.Artifacts {
			images[a.Image] = true
			switch {
			case a.Docker != nil && a.Docker.Dockerfile != "":
				if _, err := os.Stat(filepath.Join(cmdtest.MustRepoRoot(t), a.Context, a.Docker.Dockerfile)); err != nil {
					t.Errorf("profile %q: artifact %s: %v", profile, a.Image, err)
				}
			case a.Custom != nil && a.Custom.BuildCommand != "":
				// testing/cluster/images.sh skaffold NAME: the script and its image exist.
				f := strings.Fields(a.Custom.BuildCommand)
				if len(f) != 3 || f[0] != "testing/cluster/images.sh" || f[1] != "skaffold" {
					t.Errorf("profile %q: artifact %s: buildCommand %q: want testing/cluster/images.sh skaffold NAME", profile, a.Image, a.Custom.BuildCommand)
				} else if f[2] == "haade" {
					// images.sh builds HAADE's image from the Dockerfile.
					if _, err := os.Stat(filepath.Join(cmdtest.MustRepoRoot(t), "Dockerfile")); err != nil {
						t.Errorf("profile %q: artifact %s: %v", profile, a.Image, err)
					}
				} else if _, err := os.Stat(filepath.Join(cmdtest.MustRepoRoot(t), "testing/cluster/images", f[2], "Containerfile")); err != nil {
					t.Errorf("profile %q: artifact %s: %v", profile, a.Image, err)
				}
			default:
				t.Errorf("profile %q: artifact %s: neither docker.dockerfile nor custom.buildCommand", profile, a.Image)
			}
		}
		ours := false
		cl := newCluster(t, kustomizeBuild(t, overlay))
		for _, pod := range cl.pods {
			for _, ctr := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
				if ourImage.MatchString(ctr.Image) || (profile == "node" && strings.HasPrefix(ctr.Image, "localhost/")) {
					repo, _, _ := strings.Cut(ctr.Image, ":")
					ours = true
					if !images[repo] {
						t.Errorf("profile %q: %s uses image %s, which Skaffold does not build (%v)", profile, pod.Owner.id(), repo, images)
					}
				}
			}
		}
		if !ours {
			t.Errorf("k8s/%s: no workload uses the HAADE image", overlay)
		}
	}
	// The worker pool's image is inside a FlinkDeployment: Skaffold only
	// rewrites images in custom resources its resourceSelector allows.
	allowed := false
	if rs := c.ResourceSelector; rs != nil {
		for _, a := range rs.Allow {
			allowed = allowed || (a.GroupKind == "FlinkDeployment.flink.apache.org" && len(a.Image) > 0)
		}
	}
	if !allowed {
		t.Error("resourceSelector does not allow image rewriting in FlinkDeployment.flink.apache.org")
	}
	// Port-forwards: MinIO's console, the Flink UI, the metrics.
	dev := newCluster(t, kustomizeBuild(t, "overlays/dev"))
	forwarded := map[int]bool{}
	for _, pf := range c.PortForward {
		forwarded[pf.Port] = true
		if pf.ResourceType != "service" {
			t.Errorf("portForward %s/%s: resourceType %s, want service", pf.Namespace, pf.ResourceName, pf.ResourceType)
			continue
		}
		if err := dev.resolve(pf.Namespace, pf.ResourceName+"."+pf.Namespace+":"+strconv.Itoa(pf.Port)); err != nil {
			t.Errorf("portForward: %v", err)
		}
	}
	for port, what := range map[int]string{9001: "the MinIO console", 8081: "the Flink UI", 9102: "bronze's metrics"} {
		if !forwarded[port] {
			t.Errorf("skaffold.yaml does not port-forward %s (%d)", what, port)
		}
	}
	t.Run("skaffold", runSkaffold)
}

// runSkaffold validates skaffold.yaml with Skaffold itself, when a binary
// is at hand: $HAADE_SKAFFOLD, or skaffold on PATH. Building one takes long
// (see k8s/README.md), so plain test runs use the subset check above. With
// a kustomize binary on PATH too, it also renders each profile offline and
// checks that Skaffold put its image tag everywhere the image is used,
// the FlinkDeployment's worker pool included.
func runSkaffold(t *testing.T) {
	bin := os.Getenv("HAADE_SKAFFOLD")
	if bin == "" {
		bin, _ = exec.LookPath("skaffold")
	}
	if bin == "" {
		t.Skip("no skaffold binary (set HAADE_SKAFFOLD): skaffold.yaml checked by the strict subset only")
	}
	skaffold := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--filename", "skaffold.yaml")...)
		cmd.Dir = cmdtest.MustRepoRoot(t)
		cmd.Env = append(os.Environ(), "SKAFFOLD_UPDATE_CHECK=false", "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return nil, fmt.Errorf("skaffold %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return stdout.Bytes(), nil
	}
	for _, args := range [][]string{
		{"diagnose", "--yaml-only"},
		{"diagnose", "--yaml-only", "-p", "dev"},
		{"diagnose", "--yaml-only", "-p", "prod"},
		{"diagnose", "--yaml-only", "-p", "node"},
		{"fix", "--overwrite=false"},
	} {
		if _, err := skaffold(args...); err != nil {
			t.Error(err)
		} else {
			t.Logf("skaffold %s: ok", strings.Join(args, " "))
		}
	}
	t.Run("render", func(t *testing.T) { skaffoldRender(t, bin, skaffold) })
}

// skaffoldRender renders each profile offline and checks the image tags.
func skaffoldRender(t *testing.T, bin string, skaffold func(args ...string) ([]byte, error)) {
	if _, err := exec.LookPath("kustomize"); err != nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "kustomize")); err != nil {
			t.Skip("no kustomize binary next to skaffold or on PATH: skaffold render not run")
		}
	}
	for profile, image := range map[string]string{"dev": "haade", "prod": "ghcr.io/haade/haade"} {
		out, err := skaffold("render", "--offline=true", "--digest-source=tag", "-p", profile)
		if err != nil {
			t.Error(err)
			continue
		}
		objs, err := splitDocs("skaffold render -p "+profile, out)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range newCluster(t, objs).pods {
			for _, ctr := range p.Spec.Containers {
				if repo, tag, _ := strings.Cut(ctr.Image, ":"); repo == image {
					n++
					if tag == "" {
						t.Errorf("skaffold render -p %s: %s %s: image %s was not given the built tag", profile, p.Owner.id(), ctr.Name, ctr.Image)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("skaffold render -p %s: no container runs %s", profile, image)
		}
		t.Logf("skaffold render -p %s: %d objects, %d containers run %s with the built tag", profile, len(objs), n, image)
	}
}

// TestSkaffoldRollsOut checks what makes a Skaffold deploy a rollout: the
// overlays Skaffold deploys add --replace to the submit Job (a new build's job
// replaces the running one; without it the old job, recovered by the
// operator's new session cluster, would go on running the old pipeline), the
// plain overlays do not (an unchanged Job's re-run starts nothing), and the
// node profile, which applies server-side and so cannot --force, deletes
// every Job its overlay holds before each deploy.
func TestSkaffoldRollsOut(t *testing.T) {
	for dir, want := range map[string]int{"overlays/skaffold-dev": 1, "overlays/skaffold-node": 1,
		"overlays/dev": 0, "overlays/node-dev": 0, "overlays/node": 0, "overlays/prod": 0} {
		if n := replaceArgs(kustomizeBuild(t, dir)); n != want {
			t.Errorf("k8s/%s: bronze-submit has --replace %d times, want %d", dir, n, want)
		}
	}

	raw, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), "skaffold.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c skaffoldConfig
	if err := decodeStrict(raw, &c); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Profiles {
		switch p.Name {
		case "dev":
			if d := p.Deploy; d == nil || d.Kubectl == nil || !slices.Contains(d.Kubectl.Flags.Apply, "--force") {
				t.Errorf("profile dev: kubectl apply without --force: a rebuilt image's Job cannot be applied")
			}
		case "node":
			d := p.Deploy
			if d == nil || d.Kubectl == nil || d.Kubectl.Hooks == nil || len(d.Kubectl.Hooks.Before) != 1 || d.Kubectl.Hooks.Before[0].Host == nil {
				t.Fatalf("profile node: want one host hook before each deploy, deleting the Jobs")
			}
			cmd := d.Kubectl.Hooks.Before[0].Host.Command
			if len(cmd) != 3 || cmd[0] != "sh" || cmd[1] != "-c" {
				t.Fatalf("profile node: hook %q, want sh -c SCRIPT", cmd)
			}
			// Each "kubectl ... delete job ... -n NS NAME..." deletes those Jobs.
			deleted := map[string]bool{}
			for _, part := range strings.Split(cmd[2], "&&") {
				f := strings.Fields(part)
				if !slices.Contains(f, "delete") || !slices.Contains(f, "job") || !slices.Contains(f, "--ignore-not-found") {
					t.Errorf("profile node: hook command %q: want kubectl delete job --ignore-not-found", part)
					continue
				}
				i := slices.Index(f, "-n")
				if i < 0 || i+1 >= len(f) {
					t.Errorf("profile node: hook command %q names no namespace", part)
					continue
				}
				for _, name := range f[i+2:] {
					deleted[f[i+1]+"/"+name] = true
				}
			}
			for _, o := range kustomizeBuild(t, "overlays/skaffold-node") {
				if o.kind() == "Job" && !deleted[o.namespace()+"/"+o.name()] {
					t.Errorf("profile node: the hook does not delete Job %s/%s, so a rebuilt image's deploy fails on its immutable template", o.namespace(), o.name())
				}
			}
		}
	}
}

// replaceArgs counts the --replace arguments of the first container of the
// Job bronze-submit among objs; -1 when there is no such Job.
func replaceArgs(objs []object) int {
	for _, o := range objs {
		if o.kind() != "Job" || o.name() != "bronze-submit" {
			continue
		}
		n := 0
		for _, a := range list(o.Map, "spec", "template", "spec", "containers")[0].(map[string]any)["args"].([]any) {
			if a == "--replace" {
				n++
			}
		}
		return n
	}
	return -1
}
