package k8s_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

func init() {
	_, file, _, _ := runtime.Caller(0)
	appRoot = filepath.Dir(filepath.Dir(file))
}

// overlays are the kustomizations a user deploys.
var overlays = []string{"overlays/dev", "overlays/prod"}

// TestYAMLParses parses every YAML file under k8s/ and skaffold.yaml:
// malformed YAML, a duplicate key or a document without apiVersion and kind
// fails.
func TestYAMLParses(t *testing.T) {
	files := append(yamlFiles(t, k8sDir(t)), filepath.Join(cmdtest.MustRepoRoot(t), "skaffold.yaml"))
	if len(files) < 10 {
		t.Fatalf("found only %d YAML files", len(files))
	}
	for _, f := range files {
		for _, o := range loadFile(t, f) {
			if o.apiVersion() == "" || o.kind() == "" {
				t.Errorf("%s: no apiVersion or kind", o.Source)
			}
		}
	}
}

// TestKustomizationsStrict decodes every kustomization.yaml strictly into
// kustomize's own type.
func TestKustomizationsStrict(t *testing.T) {
	n := 0
	for _, f := range yamlFiles(t, k8sDir(t)) {
		for _, o := range loadFile(t, f) {
			if !isKustomization(o) {
				continue
			}
			n++
			if _, err := decodeKustomization(o); err != nil {
				t.Error(err)
			}
		}
	}
	if n < 6 {
		t.Errorf("found %d kustomization files, want base, kafka, lakehouse, dev, prod, argocd", n)
	}
}

// TestSourceManifests validates every object as written in the repository:
// built-in kinds decode strictly into k8s.io/api types, custom resources
// pass their operator's checks.
func TestSourceManifests(t *testing.T) {
	for _, f := range yamlFiles(t, k8sDir(t)) {
		for _, o := range loadFile(t, f) {
			if isKustomization(o) {
				continue
			}
			for _, e := range validate(o) {
				t.Error(e)
			}
		}
	}
}

// TestKustomizeBuild builds every kustomization under k8s/ (the base and its
// parts, each overlay, the Argo CD bootstrap) with the kustomize library,
// then validates what each produces.
func TestKustomizeBuild(t *testing.T) {
	var dirs []string
	for _, f := range yamlFiles(t, k8sDir(t)) {
		if filepath.Base(f) == "kustomization.yaml" {
			rel, _ := filepath.Rel(k8sDir(t), filepath.Dir(f))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
	}
	for _, want := range append([]string{"base", "argocd"}, overlays...) {
		if !slices.Contains(dirs, want) {
			t.Errorf("no kustomization in k8s/%s", want)
		}
	}
	// A kustomize Component builds only inside a kustomization that lists
	// it: each must be listed by one, whose build below validates it.
	var components []string
	used := map[string]bool{}
	for _, dir := range dirs {
		if isComponent(t, dir) {
			components = append(components, dir)
			continue
		}
		for _, c := range componentsOf(t, dir) {
			used[c] = true
		}
	}
	for _, c := range components {
		if !used[c] {
			t.Errorf("k8s/%s is a Component no kustomization lists, so nothing builds it", c)
		}
	}
	for _, dir := range dirs {
		if slices.Contains(components, dir) {
			continue
		}
		t.Run(dir, func(t *testing.T) {
			objs := kustomizeBuild(t, dir)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.kind()]++
				for _, e := range validate(o) {
					t.Error(e)
				}
				// Without one, kubectl puts the object into the context's
				// namespace, usually default.
				if !clusterScoped[o.kind()] && o.namespace() == "" {
					t.Errorf("%s: no namespace", o.id())
				}
			}
			t.Logf("k8s/%s: %d objects: %v", dir, len(objs), sortedCounts(kinds))
		})
	}
}

// clusterScoped are the kinds the manifests use that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"PersistentVolume": true, "StorageClass": true, "Kustomization": true, "Component": true,
}

func sortedCounts(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+strconv.Itoa(v))
	}
	sort.Strings(out)
	return out
}

// TestOverlays checks what each overlay deploys as a whole: that the pieces
// refer to each other correctly, and the hardening rules.
func TestOverlays(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			c := newCluster(t, kustomizeBuild(t, dir))
			c.checkNamespaces()
			c.checkRequiredObjects()
			c.checkPods()
			c.checkReferences()
			c.checkServices()
			c.checkNetworkPolicies()
			c.checkMonitors()
			c.checkEndpoints()
			c.checkSecrets(strings.HasSuffix(dir, "prod"))
		})
	}
}

// TestArgoCD checks that the Applications belong to the AppProject, that
// the project admits their sources and destinations, and that there is one
// Application per overlay.
func TestArgoCD(t *testing.T) {
	objs := kustomizeBuild(t, "argocd")
	projects := map[string]object{}
	for _, o := range objs {
		if o.kind() == "AppProject" {
			projects[o.name()] = o
		}
	}
	paths := map[string]bool{}
	for _, o := range objs {
		if o.kind() != "Application" {
			continue
		}
		p, ok := projects[str(o.Map, "spec", "project")]
		if !ok {
			t.Errorf("%s: project %q is not defined", o.id(), str(o.Map, "spec", "project"))
			continue
		}
		repos := map[string]bool{}
		for _, r := range list(p.Map, "spec", "sourceRepos") {
			repos[r.(string)] = true
		}
		if repo := str(o.Map, "spec", "source", "repoURL"); !repos[repo] && !repos["*"] {
			t.Errorf("%s: repoURL %s is not in the project's sourceRepos", o.id(), repo)
		}
		dest := mapAt(o.Map, "spec", "destination")
		admitted := false
		for _, d := range list(p.Map, "spec", "destinations") {
			if (str(d, "server") != "" && str(d, "server") == str(dest, "server")) || (str(d, "name") != "" && str(d, "name") == str(dest, "name")) {
				admitted = true
			}
		}
		if !admitted {
			t.Errorf("%s: destination %v is not in the project's destinations", o.id(), dest)
		}
		paths[str(o.Map, "spec", "source", "path")] = true
	}
	for _, dir := range overlays {
		if !paths["k8s/"+dir] {
			t.Errorf("no Application deploys k8s/%s", dir)
		}
	}
}

// componentsOf gives the Components k8s/<dir>/kustomization.yaml lists,
// as paths relative to k8s/.
func componentsOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, o := range loadFile(t, filepath.Join(k8sDir(t), dir, "kustomization.yaml")) {
		list, _ := o.Map["components"].([]any)
		for _, c := range list {
			p, _ := c.(string)
			out = append(out, filepath.ToSlash(filepath.Join(dir, p)))
		}
	}
	return out
}

// isComponent says whether k8s/<dir>/kustomization.yaml is a kustomize Component.
func isComponent(t *testing.T, dir string) bool {
	t.Helper()
	for _, o := range loadFile(t, filepath.Join(k8sDir(t), dir, "kustomization.yaml")) {
		if o.kind() == "Component" {
			return true
		}
	}
	return false
}
