// Package k8s holds HAADE's Kubernetes deployment: a kustomize base with dev
// and prod overlays (base/, overlays/), the Argo CD project and Applications
// (argocd/), and the deploy guide (README.md).
//
// The package has no code; its tests validate, without a cluster, the
// manifests, the kustomize builds, the root Dockerfile and skaffold.yaml:
//
//	go test ./k8s/
//	HAADE_DOCKERFILE_BUILD=1 go test -run TestDockerfile ./k8s/   (also cross-compiles the image's binaries)
//	HAADE_SKAFFOLD=/path/to/skaffold go test -run TestSkaffold ./k8s/ (also runs Skaffold's own checks)
//	k8s/validate.sh   (all of it, building Skaffold and kustomize once into $HAADE_CACHE)
//
// Against a real kube-apiserver (testing/cluster/apiserver.sh builds and
// runs it; .ci/k8sapi does all of it):
//
//	go test -tags apiserver -run TestAPIServer ./k8s/
package k8s
