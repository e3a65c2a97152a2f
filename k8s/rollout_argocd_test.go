package k8s_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestArgoCDImagesReachEveryContainer renders each Argo CD Application as
// Argo CD does: its source path with the Application's kustomize image
// overrides set (`kustomize edit set image`), and $ARGOCD_APP_REVISION
// replaced by a commit, and its kustomize components added (`kustomize edit
// add component`, relative to the source path). Every container that runs the HAADE image, the
// FlinkDeployment's worker-pool sidecar and the CronJob included, must then
// run the overridden reference. A container the override missed would keep
// the bare "haade", that is haade:latest: a mutable tag with IfNotPresent,
// which never rolls out (and the worker pool's boot would drift from the
// submitted worker binary). Every Application's submit Job must also carry
// --replace (components/replace-on-rollout): Argo CD re-creates it for each
// new revision, and without it the old Flink job would run on.
func TestArgoCDImagesReachEveryContainer(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	root := cmdtest.MustRepoRoot(t)
	mem := filesys.MakeFsInMemory()
	// The repository's k8s/ tree, in memory, so that an overlay of the
	// Application's path can be written next to it.
	err := filepath.WalkDir(filepath.Join(root, "k8s"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" && ext != ".env" && ext != ".json" && ext != ".py" && ext != ".sql" && ext != ".properties" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return mem.WriteFile(filepath.Join("/repo", rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, app := range kustomizeBuild(t, "argocd") {
		if app.kind() != "Application" {
			continue
		}
		path := str(app.Map, "spec", "source", "path")
		// No overrides: the overlay's own images (prod: a release tag), checked
		// by TestImagesRollOut.
		overrides := list(app.Map, "spec", "source", "kustomize", "images")
		var images strings.Builder
		if len(overrides) > 0 {
			images.WriteString("images:\n")
		}
		want := map[string]string{} // image name -> the reference every container must run
		for _, o := range overrides {
			s, _ := o.(string)
			s = strings.ReplaceAll(s, "$ARGOCD_APP_REVISION", commit)
			from, to, ok := strings.Cut(s, "=")
			if !ok {
				from, to = s, s
			}
			name, tag, digest := splitImage(to)
			images.WriteString("  - name: " + from + "\n    newName: " + name + "\n")
			if tag != "" {
				images.WriteString("    newTag: \"" + tag + "\"\n")
			}
			if digest != "" {
				images.WriteString("    digest: " + digest + "\n")
			}
			want[from], want[name] = to, to
		}
		dir := filepath.Join("/repo", path, "..", "argocd-"+app.name())
		kust := "resources:\n  - ../" + filepath.Base(path) + "\n" + images.String()
		if cs := list(app.Map, "spec", "source", "kustomize", "components"); len(cs) > 0 {
			kust += "components:\n"
			for _, c := range cs {
				kust += "  - " + c.(string) + "\n"
			}
		}
		if err := mem.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust)); err != nil {
			t.Fatal(err)
		}
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, dir)
		if err != nil {
			t.Fatalf("%s: kustomize build %s with its image overrides: %v", app.id(), path, err)
		}
		data, err := m.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		objs, err := splitDocs(app.name()+" rendered", data)
		if err != nil {
			t.Fatal(err)
		}
		replace := replaceArgs(objs)
		for _, o := range objs {
			pods, err := podTemplates(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
					name, _, _ := splitImage(c.Image)
					ref, ours := want[name]
					if c.Image == "" || !ours {
						continue
					}
					checked++
					where := app.name() + ": " + o.id() + " " + p.Where + " container " + c.Name
					if c.Image != ref {
						t.Errorf("%s: image %q, want the Application's override %q: this container would never roll out", where, c.Image, ref)
					}
					if c.ImagePullPolicy != corev1.PullIfNotPresent {
						t.Errorf("%s: imagePullPolicy %q with a per-commit tag: want IfNotPresent", where, c.ImagePullPolicy)
					}
				}
			}
		}
		if replace != 1 {
			t.Errorf("%s: the rendered bronze-submit has --replace %d times, want once: a new revision's Job would leave the old Flink job running", app.id(), replace)
		}
	}
	// bronze-submit, minio-bucket, minio-pipeline-user, maintain, and the
	// TaskManagers' worker pool: at least these five.
	if checked < 5 {
		t.Fatalf("checked %d containers of the HAADE image under Argo CD's overrides, want at least 5", checked)
	}
	t.Logf("%d containers of the HAADE image run Argo CD's per-commit reference", checked)
}
