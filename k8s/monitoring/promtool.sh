#!/usr/bin/env bash
# Builds Prometheus's promtool from the Go module proxy into the cache (once) and prints its
# path. Its module (github.com/prometheus/prometheus) has replace directives, so
# `go install ...@version` refuses it; it is built in a writable copy of its module instead,
# without the service discovery plugins of the cloud providers (prometheus-module.sh), which
# the rules' tests never use and which were most of its build. Needs the module proxy the
# first time.
set -euo pipefail
VERSION=v0.303.0 # Prometheus 3.3.0
CACHE="${HAADE_CACHE:-$HOME/.cache/haade}/promtool/$VERSION"
BIN="$CACHE/promtool"
if [[ ! -x "$BIN" ]]; then
	# shellcheck source=prometheus-module.sh
	source "$(dirname "${BASH_SOURCE[0]}")/prometheus-module.sh"
	src="$CACHE/src"
	prometheus_tree "$VERSION" "$src"
	echo "building promtool $VERSION into $BIN (once)" >&2
	# The server's flags (testing/monitoring/prometheus.sh): with -trimpath no package's build
	# depends on the folder of its copy, so the server's build, later, reuses what this one
	# compiled of Prometheus's own packages from the Go build cache, and the other way round.
	(cd "$src" && GOFLAGS= CGO_ENABLED=0 nice -n 10 go build -trimpath -tags netgo,stringlabels -o "$BIN.tmp" ./cmd/promtool)
	mv "$BIN.tmp" "$BIN"
	rm -rf "$src"
fi
echo "$BIN"
