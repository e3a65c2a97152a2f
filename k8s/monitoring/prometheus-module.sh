# Sourced by k8s/monitoring/promtool.sh and testing/monitoring/prometheus.sh: a module's folder
# from the Go module proxy, and a writable copy of Prometheus's module with only the service
# discovery plugins HAADE uses.
#
# Prometheus links 23 service discovery mechanisms through its generated plugins/plugins.go
# (AWS, Azure, GCE, Consul, Nomad, ...: the cloud SDKs are most of its build). Its README
# ("Service discovery plugins") says to list the ones wanted in plugins.yml and regenerate that
# file when building from source; this writes the generated file for the list given. The
# file and HTTP mechanisms are always in (plugins/minimum.go). HAADE's Prometheus discovers
# pods through Kubernetes only; promtool imports Kubernetes discovery itself and runs no
# discovery in the rules' tests.

# module_dir MODULE@VERSION: download it through the Go module proxy and print its folder.
module_dir() {
	GOFLAGS= go mod download -json "$1" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error")))'
}

# prometheus_tree VERSION DEST [PLUGIN...]: copy github.com/prometheus/prometheus@VERSION from
# the Go module proxy to DEST (replaced) with PLUGINs (discovery/PLUGIN) as its plugins.
prometheus_tree() {
	local version="$1" dest="$2" mod p
	shift 2
	mod="$(module_dir "github.com/prometheus/prometheus@$version")"
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	cp -r "$mod" "$dest"
	chmod -R u+w "$dest"
	{
		echo '// Written by HAADE'"'"'s k8s/monitoring/prometheus-module.sh, as "make plugins" would for a'
		echo '// plugins.yml that lists only these.'
		echo
		echo 'package plugins'
		if (($#)); then
			echo
			echo 'import ('
			for p in "$@"; do printf '\t_ "github.com/prometheus/prometheus/discovery/%s"\n' "$p"; done
			echo ')'
		fi
	} >"$dest/plugins/plugins.go"
	printf -- '- github.com/prometheus/prometheus/discovery/%s\n' "$@" >"$dest/plugins.yml"
}
