#!/usr/bin/env bash
# Builds Prometheus's promtool from the Go module proxy into the cache (once) and prints its
# path. Its module (github.com/prometheus/prometheus) has replace directives, so
# `go install ...@version` refuses it; it is built inside its own module directory instead.
# Needs the module proxy the first time (about 3-6 minutes of compiling on 2 cores).
set -euo pipefail
VERSION=v0.303.0 # Prometheus 3.3.0
CACHE="${HAADE_CACHE:-$HOME/.cache/haade}/promtool/$VERSION"
BIN="$CACHE/promtool"
if [[ ! -x "$BIN" ]]; then
	mkdir -p "$CACHE"
	dir="$(GOFLAGS= go mod download -json "github.com/prometheus/prometheus@$VERSION" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
	echo "building promtool $VERSION into $BIN (once)" >&2
	(cd "$dir" && GOFLAGS= nice -n 10 go build -o "$BIN.tmp" ./cmd/promtool)
	mv "$BIN.tmp" "$BIN"
fi
echo "$BIN"
