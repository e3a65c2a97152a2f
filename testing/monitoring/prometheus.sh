#!/usr/bin/env bash
# Prometheus and the Prometheus operator, built from the Go module proxy into the cache
# (issue 32: Prometheus for real). No image registry and no release download is reachable
# here, so the binaries are compiled from their Go modules, as promtool
# (k8s/monitoring/promtool.sh) and the node's binaries (testing/cluster/node.sh) are.
#
#   prometheus.sh install   build, once:
#                             prometheus                  github.com/prometheus/prometheus v0.303.0
#                                                         (Prometheus 3.3.0: the module promtool.sh
#                                                         already downloads, so one module and one
#                                                         version for the rules' tests and the server)
#                             operator                    github.com/prometheus-operator/prometheus-operator
#                             prometheus-config-reloader  v0.85.0 (the only version of the main
#                                                         module the proxy serves, and the one
#                                                         k8s/crds vendors the CRDs of)
#   prometheus.sh path NAME print the path of one of those binaries (exit 1 when not built)
#   prometheus.sh versions  print the versions this script builds
#
# Prometheus is built as its own Makefile builds it (.promu.yml: tags netgo, stringlabels,
# builtinassets; the version stamps of github.com/prometheus/common/version), but without
# builtinassets: that tag embeds the web UI, which npm builds and the module does not ship.
# Without it the UI's pages answer 500 ("Error opening React index.html") and everything else
# works: the HTTP API (/api/v1/...), scraping, rules, alerts, /metrics, /-/ready, /-/reload. CGO_ENABLED=0: one static binary for an image.
# Its service discovery is Kubernetes' (and the file and HTTP ones, always in): the generated
# plugins file lists no other (k8s/monitoring/prometheus-module.sh), as Prometheus's README says
# to build with fewer; the cloud providers' SDKs were most of its build.
#
# The operator's go.mod replaces its two API modules (pkg/apis/monitoring, pkg/client) with
# folders that its module zip does not contain (each is a module of its own), so
# `go install ...@v0.85.0` and a build inside the module cache both fail. It is built from a
# writable copy with those replace lines dropped, which requires the same two modules at the
# same version from the proxy instead.
#
# How long it took with every discovery plugin (2026-12-06, 2 cores, beside a cold CI run: load 17 to 19; the module
# cache already held Prometheus's module, for promtool; the Go build cache shared with the
# other builds): prometheus 772 s, operator 617 s, prometheus-config-reloader 22 s; 23 min
# 32 s of wall time and 8 min 28 s of user CPU in all. Warm: nothing is built (0 s). The
# cache, $HAADE_CACHE/prometheus, holds 233 MB: the binaries (prometheus 108 MB, operator
# 63 MB, prometheus-config-reloader 44 MB, stripped) and the operator's module copy (27 MB).
set -euo pipefail
SERVICE=prometheus
# shellcheck source=../services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../services/lib.sh"

PROM_VERSION="${PROM_VERSION:-v0.303.0}" # Prometheus 3.3.0
OPERATOR_VERSION="${OPERATOR_VERSION:-v0.85.0}"
PROM_DIR="$HAADE_CACHE/prometheus/prometheus-$PROM_VERSION"
OP_DIR="$HAADE_CACHE/prometheus/operator-$OPERATOR_VERSION"
NICE=(nice -n 19)

# Prometheus's module v0.3xx.y is Prometheus 3.xx.y.
prom_release() {
	local v="${PROM_VERSION#v0.}"
	echo "3.$((${v%%.*} - 300)).${v#*.}"
}

bin_path() {
	case "$1" in
	prometheus) echo "$PROM_DIR/bin/prometheus" ;;
	operator | prometheus-config-reloader) echo "$OP_DIR/bin/$1" ;;
	*) die "no binary $1 (prometheus, operator, prometheus-config-reloader)" ;;
	esac
}

# module_dir and prometheus_tree.
# shellcheck source=../../k8s/monitoring/prometheus-module.sh
source "$REPO_ROOT/k8s/monitoring/prometheus-module.sh"

stamps() { # stamps VERSION: the -X flags of github.com/prometheus/common/version
	local p=github.com/prometheus/common/version
	echo "-s -w -X $p.Version=$1 -X $p.Revision=module-proxy -X $p.Branch=HEAD -X $p.BuildUser=haade -X $p.BuildDate=$(date -u +%Y%m%d-%H:%M:%S)"
}

build_prometheus() {
	local bin src
	bin="$(bin_path prometheus)"
	[[ -x "$bin" ]] && return 0
	# Kubernetes discovery only: the operator's configuration discovers pods (PodMonitors).
	src="$PROM_DIR/src"
	prometheus_tree "$PROM_VERSION" "$src" kubernetes
	mkdir -p "$(dirname "$bin")"
	log "building prometheus $(prom_release) ($PROM_VERSION) into $bin, with Kubernetes service discovery only"
	(cd "$src" && GOFLAGS= CGO_ENABLED=0 "${NICE[@]}" go build -trimpath -tags netgo,stringlabels \
		-ldflags "$(stamps "$(prom_release)")" -o "$bin.tmp" ./cmd/prometheus)
	mv "$bin.tmp" "$bin"
	rm -rf "$src"
}

build_operator() {
	local src
	if [[ -x "$(bin_path operator)" && -x "$(bin_path prometheus-config-reloader)" ]]; then return 0; fi
	src="$OP_DIR/src"
	module_copy "github.com/prometheus-operator/prometheus-operator@$OPERATOR_VERSION" "$src" \
		github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring \
		github.com/prometheus-operator/prometheus-operator/pkg/client
	mkdir -p "$OP_DIR/bin"
	local name
	for name in operator prometheus-config-reloader; do
		[[ -x "$OP_DIR/bin/$name" ]] && continue
		log "building $name ${OPERATOR_VERSION} into $OP_DIR/bin/$name"
		(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 "${NICE[@]}" go build -trimpath \
			-ldflags "$(stamps "${OPERATOR_VERSION#v}")" -o "$OP_DIR/bin/$name.tmp" "./cmd/$name")
		mv "$OP_DIR/bin/$name.tmp" "$OP_DIR/bin/$name"
	done
}

install() {
	timed "prometheus $PROM_VERSION" with_lock prometheus build_prometheus
	timed "prometheus-operator $OPERATOR_VERSION" with_lock prometheus-operator build_operator
	log "cache: $(du -sh "$HAADE_CACHE/prometheus" | cut -f1) in $HAADE_CACHE/prometheus"
}

case "${1:-}" in
install) install ;;
path)
	b="$(bin_path "${2:?path NAME}")"
	[[ -x "$b" ]] || die "$b is not built: run $0 install"
	echo "$b"
	;;
versions) echo "prometheus $(prom_release) ($PROM_VERSION); prometheus-operator $OPERATOR_VERSION" ;;
*)
	echo "usage: $0 install|path NAME|versions" >&2
	exit 2
	;;
esac
