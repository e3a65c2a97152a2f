package k8s_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
	corev1 "k8s.io/api/core/v1"
)

// haadeImages are the names the project's own image goes by: the Skaffold
// artifact in dev, the released image in prod.
var haadeImages = map[string]bool{"haade": true, "ghcr.io/haade/haade": true}

// eachContainer calls fn for every container, init containers first, of
// every pod template in the rendered overlay dir.
func eachContainer(t *testing.T, dir string, fn func(o object, p podTemplate, c corev1.Container)) {
	t.Helper()
	for _, o := range kustomizeBuild(t, dir) {
		pods, err := podTemplates(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
				fn(o, p, c)
			}
		}
	}
}

// splitImage returns an image reference's name, tag and digest.
func splitImage(ref string) (name, tag, digest string) {
	name = ref
	if i := strings.Index(name, "@"); i >= 0 {
		name, digest = name[:i], name[i+1:]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// immutableTag: a release version, or a commit SHA as Argo CD substitutes it.
var immutableTag = regexp.MustCompile(`^(v?\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?|\$ARGOCD_APP_REVISION|[0-9a-f]{40})$`)

// TestImagesRollOut checks that a new build of the HAADE image reaches the
// pods: in every overlay each container that runs it says IfNotPresent (a
// dev image is loaded into the cluster, never pulled), so the image must
// change its tag for every build: Skaffold's inputDigest tag in dev, a
// release in prod, the commit in Argo CD's dev Application. No mutable tag
// (latest, main) is ever combined with IfNotPresent.
func TestImagesRollOut(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			eachContainer(t, dir, func(o object, p podTemplate, c corev1.Container) {
				if c.Image == "" {
					return // the FlinkDeployment's main container takes spec.image
				}
				name, tag, digest := splitImage(c.Image)
				if !haadeImages[name] {
					return // third-party images: pinned by digest (TestOverlays)
				}
				where := o.id() + " " + p.Where + " container " + c.Name
				if c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Errorf("%s: imagePullPolicy %q, want IfNotPresent (a loaded dev image cannot be pulled)", where, c.ImagePullPolicy)
				}
				switch {
				case digest != "":
				case dir == "overlays/dev":
					// Skaffold replaces the bare artifact name with its tag.
					if c.Image != "haade" {
						t.Errorf("%s: image %q: dev runs the bare Skaffold artifact \"haade\", which Skaffold tags per build", where, c.Image)
					}
				case !immutableTag.MatchString(tag):
					t.Errorf("%s: image %q: tag %q is mutable; use a release, a commit or a digest", where, c.Image, tag)
				}
			})
		})
	}

	// Skaffold's tag must change with every change of the sources.
	raw, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), "skaffold.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc skaffoldConfig
	if err := decodeStrict(raw, &sc); err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.Build.TagPolicy["inputDigest"]; !ok || len(sc.Build.TagPolicy) != 1 {
		t.Errorf("skaffold.yaml: build.tagPolicy %v: want inputDigest, a tag per change of the sources (gitCommit reuses <sha>-dirty)", tagPolicies(sc.Build.TagPolicy))
	}

	// Argo CD's image overrides.
	for _, o := range kustomizeBuild(t, "argocd") {
		if o.kind() != "Application" {
			continue
		}
		for _, img := range list(o.Map, "spec", "source", "kustomize", "images") {
			s, _ := img.(string)
			_, ref, _ := strings.Cut(s, "=")
			if ref == "" {
				ref = s
			}
			_, tag, digest := splitImage(ref)
			if digest == "" && !immutableTag.MatchString(tag) {
				t.Errorf("%s: image override %q: tag %q is mutable, and the pods' IfNotPresent would never roll it out; use $ARGOCD_APP_REVISION, a release or a digest", o.id(), s, tag)
			}
		}
	}
}

// TestJobsResync checks the Jobs against what Argo CD does on a sync. A
// Job's pod template is immutable, so applying a changed Job fails: each
// Job is either a hook, recreated by Argo CD on every sync, or marked
// Force=true,Replace=true, recreated when it changes, with the Applications
// applying only out-of-sync resources so that an unchanged Job is not rerun.
// A Job deleted by ttlSecondsAfterFinished would be recreated by self-heal,
// in a loop, so none has one unless it is a hook.
func TestJobsResync(t *testing.T) {
	replaced := false
	for _, dir := range overlays {
		for _, o := range kustomizeBuild(t, dir) {
			if o.kind() != "Job" {
				continue
			}
			ann := mapAt(o.Map, "metadata", "annotations")
			hook, _ := ann["argocd.argoproj.io/hook"].(string)
			opts, _ := ann["argocd.argoproj.io/sync-options"].(string)
			set := map[string]bool{}
			for _, s := range strings.Split(opts, ",") {
				set[strings.TrimSpace(s)] = true
			}
			switch {
			case hook != "":
				if ann["argocd.argoproj.io/hook-delete-policy"] == nil {
					t.Errorf("%s: hook %s without hook-delete-policy: the next sync cannot recreate it", o.id(), hook)
				}
			case set["Replace=true"] && set["Force=true"]:
				replaced = true
				if get(o.Map, "spec", "ttlSecondsAfterFinished") != nil {
					t.Errorf("%s: ttlSecondsAfterFinished: Argo CD's self-heal would recreate the deleted Job, again and again", o.id())
				}
			default:
				t.Errorf("%s: a Job Argo CD syncs must be a hook or carry argocd.argoproj.io/sync-options: Force=true,Replace=true (its pod template is immutable)", o.id())
			}
		}
	}
	if !replaced {
		return
	}
	for _, o := range kustomizeBuild(t, "argocd") {
		if o.kind() != "Application" {
			continue
		}
		found := false
		for _, s := range list(o.Map, "spec", "syncPolicy", "syncOptions") {
			found = found || s == "ApplyOutOfSyncOnly=true"
		}
		if !found {
			t.Errorf("%s: syncOptions lack ApplyOutOfSyncOnly=true: every sync would recreate the Replace=true Jobs", o.id())
		}
		// Argo CD 3 diffs a server-side-applied Application by a dry-run
		// apply, which a changed Job's immutable template fails: a commit
		// never rolled out on the node.
		ann := mapAt(o.Map, "metadata", "annotations")
		if opts, _ := ann["argocd.argoproj.io/compare-options"].(string); !strings.Contains(opts, "ServerSideDiff=false") {
			t.Errorf("%s: no argocd.argoproj.io/compare-options: ServerSideDiff=false: the server-side diff of a changed Replace=true Job fails, and the commit does not roll out", o.id())
		}
	}
}

func tagPolicies(m map[string]struct{}) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
