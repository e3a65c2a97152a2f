package k8s_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// object is one YAML document: a Kubernetes object or a tool's config.
type object struct {
	// Source says where it came from: "file.yaml#2" or "build overlays/dev".
	Source string
	// Raw is the document's YAML.
	Raw []byte
	// Map is the document decoded as JSON would be.
	Map map[string]any
}

func (o object) apiVersion() string { return str(o.Map, "apiVersion") }
func (o object) kind() string       { return str(o.Map, "kind") }
func (o object) name() string       { return str(o.Map, "metadata", "name") }
func (o object) namespace() string  { return str(o.Map, "metadata", "namespace") }

// gvk is "apiVersion/kind", e.g. "apps/v1/Deployment" or "v1/Service".
func (o object) gvk() string { return o.apiVersion() + "/" + o.kind() }

// id names the object in test failures.
func (o object) id() string {
	return fmt.Sprintf("%s %s/%s (%s)", o.kind(), o.namespace(), o.name(), o.Source)
}

// k8sDir is the directory of this package, k8s/.
func k8sDir(t testing.TB) string { return filepath.Join(cmdtest.MustRepoRoot(t), "k8s") }

// splitDocs parses a multi-document YAML stream. Duplicate keys and
// malformed YAML are errors; empty documents are skipped.
func splitDocs(source string, data []byte) ([]object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(js, &m); err != nil {
			return nil, fmt.Errorf("%s: document %d: not a mapping: %w", source, i, err)
		}
		out = append(out, object{Source: fmt.Sprintf("%s#%d", source, i), Raw: doc, Map: m})
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") || t == "---" {
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.Bytes()
}

// yamlFiles lists every .yaml and .yml file under dir.
func yamlFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// k8s/crds holds the operators' vendored CRDs, not manifests.
		if d.IsDir() && p == filepath.Join(dir, "crds") {
			return filepath.SkipDir
		}
		// The operators' own CRDs (k8s/operators/*/crd-*.yaml) are vendored too;
		// kustomizeconfig.yaml files are kustomize's transformer settings.
		if !d.IsDir() && (strings.HasPrefix(d.Name(), "crd-") || d.Name() == "kustomizeconfig.yaml") {
			return nil
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// loadFile parses every document of one file.
func loadFile(t testing.TB, path string) []object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(cmdtest.MustRepoRoot(t), path)
	objs, err := splitDocs(rel, data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// isKustomization tells kustomize's own files from the resources they list.
func isKustomization(o object) bool {
	return strings.HasPrefix(o.apiVersion(), "kustomize.config.k8s.io/") ||
		filepath.Base(strings.SplitN(o.Source, "#", 2)[0]) == "kustomization.yaml"
}

// kustomizeBuild runs `kustomize build` on k8s/<dir> with the kustomize
// library, as `kubectl apply -k` and Argo CD do, and returns the objects.
func kustomizeBuild(t testing.TB, dir string) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(k8sDir(t), dir))
	if err != nil {
		t.Fatalf("kustomize build k8s/%s: %v", dir, err)
	}
	data, err := m.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build k8s/%s: %v", dir, err)
	}
	objs, err := splitDocs("build k8s/"+dir, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("kustomize build k8s/%s: no objects", dir)
	}
	return objs
}

// get walks nested maps; it returns nil when a key is missing.
func get(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func str(m any, path ...string) string {
	s, _ := get(m, path...).(string)
	return s
}

func list(m any, path ...string) []any {
	l, _ := get(m, path...).([]any)
	return l
}

func mapAt(m any, path ...string) map[string]any {
	mm, _ := get(m, path...).(map[string]any)
	return mm
}

// num returns a YAML number as float64, and whether it was one.
func num(m any, path ...string) (float64, bool) {
	f, ok := get(m, path...).(float64)
	return f, ok
}
