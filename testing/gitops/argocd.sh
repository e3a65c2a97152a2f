#!/usr/bin/env bash
# Argo CD, built from the Go module proxy into the cache (issue 32: GitOps for real). No image
# registry or release download is reachable here, so its binary is compiled from its module, as
# Prometheus and its operator are (testing/monitoring/prometheus.sh).
#
#   argocd.sh install   build, once, github.com/argoproj/argo-cd/v3 v3.6.1 into one binary,
#                       argocd, which is the application controller, the repo server, the API
#                       server and the CLI by the name it is started under (argocd-repo-server,
#                       argocd-application-controller, argocd-server, argocd), as the release
#                       image's symlinks start it
#                       and kustomize v5.8.3 (sigs.k8s.io/kustomize/kustomize/v5, the version
#                       Argo CD's hack/tool-versions.sh pins), which the repo server runs to
#                       render a kustomization, as its image ships it (it needs Go 1.27 too)
#   argocd.sh path [argocd|kustomize]
#                       print a binary's path (exit 1 when not built)
#   argocd.sh version   print the versions this script builds
#
# Its go.mod declares Go 1.27: the go command takes the Go 1.27.4 toolchain from the module proxy
# (GOTOOLCHAIN, about 76 MB, once per machine). It replaces its gitops-engine/v3 module with the
# folder ./gitops-engine, which is a module of its own and so not in the main module's zip:
# `go install ...@v3.6.1` and a build inside the module cache both fail. It is built from a
# writable copy with that replace line dropped, which takes
# github.com/argoproj/argo-cd/gitops-engine/v3 at the same version from the proxy instead. The
# version stamps are those of its Makefile (github.com/argoproj/argo-cd/v3/common.version and
# the rest). CGO_ENABLED=0, -trimpath: one static binary for an image.
#
# How long it took (2026-12-07, 2 cores, at nice 19 with -p 1 beside a cluster run, the module
# cache empty of its dependencies): 546 s of wall time, 453 s of user and 113 s of system CPU,
# 2.8 GB peak RSS; 2,325 packages; the binary is 230 MB (before -s -w). testing/cluster/images.sh
# (part gitops) puts both binaries in the image haade-argocd, which .ci/gitops runs on the node.
set -euo pipefail
SERVICE=argocd
# shellcheck source=../services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../services/lib.sh"

ARGOCD_VERSION="${ARGOCD_VERSION:-v3.6.1}"
ARGOCD_GO="${ARGOCD_GO:-go1.27.4}" # the toolchain its go.mod needs, from the module proxy
DIR="$HAADE_CACHE/argocd/argocd-$ARGOCD_VERSION"
BIN="$DIR/bin/argocd"
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.3}"
KUSTOMIZE="$HAADE_CACHE/argocd/kustomize-$KUSTOMIZE_VERSION/kustomize"

build() {
	[[ -x "$BIN" ]] && return 0
	local src="$DIR/src" p=github.com/argoproj/argo-cd/v3/common
	export GOTOOLCHAIN="$ARGOCD_GO"
	module_copy "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" "$src" github.com/argoproj/argo-cd/gitops-engine/v3
	mkdir -p "$DIR/bin"
	log "building argocd $ARGOCD_VERSION with $ARGOCD_GO into $BIN"
	(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 19 go build -trimpath \
		-ldflags "-s -w -X $p.version=${ARGOCD_VERSION#v} -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ) -X $p.gitCommit=module-proxy -X $p.gitTreeState=clean" \
		-o "$BIN.tmp" ./cmd)
	mv "$BIN.tmp" "$BIN"
	rm -rf "$src"
}

build_kustomize() {
	[[ -x "$KUSTOMIZE" ]] && return 0
	log "building kustomize $KUSTOMIZE_VERSION into $KUSTOMIZE"
	mkdir -p "$(dirname "$KUSTOMIZE")"
	GOTOOLCHAIN="$ARGOCD_GO" GOFLAGS= CGO_ENABLED=0 GOBIN="$(dirname "$KUSTOMIZE")" nice -n 19 go install -trimpath -ldflags "-s -w" \
		"sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

case "${1:-}" in
install)
	timed "argocd $ARGOCD_VERSION" with_lock argocd build
	timed "kustomize $KUSTOMIZE_VERSION" with_lock argocd build_kustomize
	log "cache: $(du -sh "$HAADE_CACHE/argocd" | cut -f1) in $HAADE_CACHE/argocd"
	;;
path)
	case "${2:-argocd}" in
	argocd) b=$BIN ;;
	kustomize) b=$KUSTOMIZE ;;
	*) die "path: unknown binary ${2} (argocd, kustomize)" ;;
	esac
	[[ -x "$b" ]] || die "$b is not built: run $0 install"
	echo "$b"
	;;
version) echo "argocd $ARGOCD_VERSION (Go $ARGOCD_GO), kustomize $KUSTOMIZE_VERSION" ;;
*)
	echo "usage: $0 install|path [argocd|kustomize]|version" >&2
	exit 2
	;;
esac
