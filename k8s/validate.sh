#!/usr/bin/env bash
# Validates the Kubernetes deployment without a cluster: the tests of ./k8s/
# with their two expensive checks turned on, and the submit Job's command
# line against the real bronze flag set.
#   - HAADE_DOCKERFILE_BUILD=1: cross-compiles the Dockerfile's exact
#     `go build` commands (CGO_ENABLED=0 GOOS=linux GOARCH=amd64).
#   - HAADE_SKAFFOLD: Skaffold's own checks (diagnose for each profile, fix)
#     and an offline `skaffold render` of the dev and prod profiles.
#
# Skaffold and kustomize are built from the Go module proxy on first use and
# cached in $HAADE_CACHE/k8s-tools (default ~/.cache/haade). Building Skaffold
# is slow: about 35 minutes of wall time measured on a busy 2-core machine.
#
#   k8s/validate.sh             build the tools if missing, then run everything
#   k8s/validate.sh --no-tools  skip Skaffold's own checks
#   k8s/validate.sh tools       only build the tools (if missing); print their folder
set -euo pipefail
cd "$(dirname "$0")/.."

HAADE_CACHE="${HAADE_CACHE:-$HOME/.cache/haade}"
SKAFFOLD_VERSION=v2.16.1   # the newest the Go module proxy serves
KUSTOMIZE_VERSION=v5.8.1   # v5.8.2+ need kustomize/api v0.21.3, which needs Go 1.27
TOOLS="$HAADE_CACHE/k8s-tools/skaffold-$SKAFFOLD_VERSION-kustomize-$KUSTOMIZE_VERSION"
export GOFLAGS="${GOFLAGS:--buildvcs=false}" GOTOOLCHAIN=local

log() { printf '[%s k8s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

build_tools() {
	mkdir -p "$TOOLS"
	exec 9>"$TOOLS/.lock"
	flock 9
	if [[ ! -x "$TOOLS/kustomize" ]]; then
		log "building kustomize $KUSTOMIZE_VERSION"
		GOBIN="$TOOLS" nice -n 10 go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
	fi
	if [[ ! -x "$TOOLS/skaffold" ]]; then
		# `go install ...skaffold@version` refuses a module with replace
		# directives, so build it as the main module, from the proxy's copy.
		log "building skaffold $SKAFFOLD_VERSION (slow)"
		local dir src
		dir=$(go mod download -json "github.com/GoogleContainerTools/skaffold/v2@$SKAFFOLD_VERSION" |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		[[ -d "$dir" ]] || { log "ERROR: skaffold source not downloaded"; exit 1; }
		src=$(mktemp -d)
		cp -r "$dir/." "$src"
		chmod -R u+w "$src"
		(cd "$src" && GOFLAGS="$GOFLAGS -mod=mod" nice -n 10 go build -o "$TOOLS/skaffold.tmp" ./cmd/skaffold)
		mv "$TOOLS/skaffold.tmp" "$TOOLS/skaffold"
		rm -rf "$src"
	fi
	exec 9>&-
}

if [[ "${1:-}" == tools ]]; then
	build_tools
	echo "$TOOLS"
	exit 0
fi
if [[ "${1:-}" != "--no-tools" ]]; then
	build_tools
	export HAADE_SKAFFOLD="$TOOLS/skaffold" PATH="$TOOLS:$PATH"
fi
log "go test ./k8s/ with the Dockerfile build${HAADE_SKAFFOLD:+ and Skaffold}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! HAADE_DOCKERFILE_BUILD=1 go test -count=1 -timeout 40m -v ./k8s/ >"$out" 2>&1; then
	cat "$out"
	exit 1
fi
grep -E '^(--- |ok )|_test.go:' "$out"
go test -count=1 -run '^TestKubernetesSubmitJob$' ./pipelines/bronze/
