#!/usr/bin/env bash
# A real kube-apiserver and etcd on 127.0.0.1, for server-side dry runs of k8s/ (issue 13).
# No controller manager, scheduler or kubelet: nothing is ever scheduled, the server only
# admits, validates and stores objects.
#
#   apiserver.sh install  build kube-apiserver, etcd and kubectl from the Go module proxy
#                         into $HAADE_CACHE/k8s-apiserver/<versions>/bin (once; reused)
#   apiserver.sh start    install if needed, make the certificates, start etcd and
#                         kube-apiserver, wait for /readyz; writes $HAADE_RUN/k8s-apiserver/kubeconfig
#   apiserver.sh stop     stop both; the etcd data dir stays, so `start` brings the objects back
#   apiserver.sh reset    stop, then delete the data dir and the certificates
#   apiserver.sh status   running and ready or not (exit 0 when ready, 3 when stopped)
#   apiserver.sh env      print `export KUBECONFIG=...` (and the PATH of the built kubectl)
#
# Where the binaries come from: a wrapper module in a temporary directory requires
# k8s.io/kubernetes $K8S_VERSION and pins every k8s.io/* staging module to the matching
# v0.x.y with replace lines (Kubernetes' own go.mod points them at ./staging, which a
# module download does not have). etcd is built in the same module graph, at the version
# Kubernetes itself requires, from a three-line main over go.etcd.io/etcd/server/v3/etcdmain.
#
# Listens on 127.0.0.1 only: etcd client :$ETCD_PORT, peer :$ETCD_PEER_PORT; kube-apiserver
# https :$APISERVER_PORT. Authentication: an admin client certificate (O=system:masters)
# signed by a CA made here with openssl; no token, no password.
set -euo pipefail
SERVICE=apiserver
# shellcheck source=../services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../services/lib.sh"

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
# The staging modules (k8s.io/api, client-go, ...) are tagged v0.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
NICE=(nice -n 19)
APISERVER_HOST=127.0.0.1
# The address the server also listens on and advertises as the kubernetes Service's endpoint.
# Empty (the default): 127.0.0.1 only. testing/cluster/node.sh sets the node's address
# (10.200.0.1, inside its own network namespace), so that pods reach the API server.
APISERVER_ADVERTISE="${APISERVER_ADVERTISE:-}"
APISERVER_PORT="${APISERVER_PORT:-6443}"
ETCD_PORT="${ETCD_PORT:-2379}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-2380}"
START_TIMEOUT="${APISERVER_START_TIMEOUT:-180}"

BUILD_DIR="$HAADE_CACHE/k8s-apiserver/kubernetes-$K8S_VERSION"
BIN_DIR="$BUILD_DIR/bin"
RUN_DIR="$HAADE_RUN/k8s-apiserver"
PKI="$RUN_DIR/pki"
ETCD_DATA="$RUN_DIR/etcd"
KUBECONFIG_FILE="$RUN_DIR/kubeconfig"
SERVER_URL="https://$APISERVER_HOST:$APISERVER_PORT"

# write_wrapper DIR: the wrapper module. The replace lines are derived from Kubernetes' own
# go.mod, so a new release needs no edit here.
write_wrapper() {
	local dir="$1" kdir mods
	kdir=$(cd "$dir" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -f "$kdir/go.mod" ]] || die "k8s.io/kubernetes@$K8S_VERSION did not download"
	mods=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$kdir/go.mod")
	[[ -n "$mods" ]] || die "no staging replace lines found in $kdir/go.mod"
	{
		echo "module haade.local/k8s-apiserver-build"
		echo
		sed -n 's/^go \(.*\)/go \1/p' "$kdir/go.mod"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		for m in $mods; do echo "replace $m => $m $STAGING_VERSION"; done
	} >"$dir/go.mod"
	mkdir -p "$dir/cmd/etcd"
	cat >"$dir/cmd/etcd/main.go" <<'EOF'
// Command etcd is etcd's own main, built in Kubernetes' module graph.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
	cat >"$dir/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
}

# The version stamps Kubernetes' own build (hack/lib/version.sh) sets; without them the
# server reports v0.0.0-master and kubectl warns about skew.
ldflags() {
	local minor="${K8S_VERSION#v1.}"
	minor="${minor%%.*}"
	local f pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		f+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
		f+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	echo "-s -w$f"
}

build_one() { # build_one SRC_DIR NAME PACKAGE
	local src="$1" name="$2" pkg="$3" t0=$SECONDS lf="$LOG_DIR/build-$2.log"
	[[ -x "$BIN_DIR/$name" ]] && return 0
	log "building $name ($pkg)"
	if ! (cd "$src" && GOFLAGS="-mod=mod -buildvcs=false -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0 \
		"${NICE[@]}" go build -ldflags "$(ldflags)" -o "$BIN_DIR/$name.tmp" "$pkg") >"$lf" 2>&1; then
		tail_log "$lf" 60
		die "building $name failed"
	fi
	mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
	log "built $name in $((SECONDS - t0))s"
	echo "$name $((SECONDS - t0))s" >>"$BUILD_DIR/build-times"
}

build_all() {
	if [[ -x "$BIN_DIR/kube-apiserver" && -x "$BIN_DIR/etcd" && -x "$BIN_DIR/kubectl" ]]; then
		return 0
	fi
	mkdir -p "$BIN_DIR"
	local src="$BUILD_DIR/src"
	if [[ ! -f "$src/go.sum" ]]; then
		rm -rf "$src"
		mkdir -p "$src"
		write_wrapper "$src"
		log "resolving the module graph of k8s.io/kubernetes $K8S_VERSION"
		(cd "$src" && GOFLAGS=-mod=mod GOTOOLCHAIN=local "${NICE[@]}" go mod tidy) >"$LOG_DIR/build-tidy.log" 2>&1 ||
			{ tail_log "$LOG_DIR/build-tidy.log" 40; die "go mod tidy of the wrapper module failed"; }
	fi
	build_one "$src" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
	build_one "$src" etcd ./cmd/etcd
	build_one "$src" kubectl k8s.io/kubernetes/cmd/kubectl
	grep -h 'go.etcd.io/etcd/server/v3 ' "$src/go.mod" | awk '{print "etcd " $2}' >"$BUILD_DIR/versions"
}

install() { with_lock k8s-apiserver-build build_all; }

# make_pki: a CA, the server's certificate (127.0.0.1 and the in-cluster names), the
# service-account signing key pair and the admin client certificate. Made once per
# $HAADE_RUN; the keys never leave $PKI (mode 0700) and are never printed.
make_pki() {
	[[ -f "$PKI/admin.crt" ]] && return 0
	local tmp="$PKI.tmp" lf="$LOG_DIR/apiserver-pki.log"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	chmod 700 "$tmp"
	log "making certificates in $PKI"
	(
		set -e
		cd "$tmp"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=haade-test-ca"
		printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=digitalSignature,keyEncipherment' 'extendedKeyUsage=serverAuth' \
			'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,IP:10.200.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local' \
			>server.ext
		openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=kube-apiserver"
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 3650 -extfile server.ext
		printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=digitalSignature,keyEncipherment' 'extendedKeyUsage=clientAuth' >client.ext
		openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=haade-admin"
		openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 3650 -extfile client.ext
		openssl genrsa -out sa.key 2048
		openssl rsa -in sa.key -pubout -out sa.pub
		rm -f ./*.csr ./*.ext ./*.srl
	) >"$lf" 2>&1 || { tail_log "$lf" 20; die "openssl failed making the certificates"; }
	rm -rf "$PKI"
	mv "$tmp" "$PKI"
}

write_kubeconfig() {
	cat >"$KUBECONFIG_FILE.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: haade-test
  cluster:
    server: $SERVER_URL
    certificate-authority: $PKI/ca.crt
users:
- name: haade-admin
  user:
    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key
contexts:
- name: haade-test
  context:
    cluster: haade-test
    user: haade-admin
current-context: haade-test
EOF
	chmod 600 "$KUBECONFIG_FILE.tmp"
	mv "$KUBECONFIG_FILE.tmp" "$KUBECONFIG_FILE"
}

curl_api() { # curl_api PATH: GET with the admin certificate
	curl -fsS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$SERVER_URL$1"
}

etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
ready() { [[ "$(curl_api /readyz 2>/dev/null)" == ok ]]; }

start_etcd() {
	if is_running etcd && etcd_healthy; then return 0; fi
	if ! is_running etcd; then
		ensure_port_free etcd 127.0.0.1 "$ETCD_PORT"
		ensure_port_free etcd 127.0.0.1 "$ETCD_PEER_PORT"
		mkdir -p "$ETCD_DATA"
		chmod 700 "$ETCD_DATA"
		log "starting etcd on http://127.0.0.1:$ETCD_PORT, data in $ETCD_DATA"
		# Plain HTTP on loopback: only kube-apiserver talks to it. --unsafe-no-fsync: a
		# test server, whose data may be lost in a crash.
		spawn etcd "$BIN_DIR/etcd" --name haade --data-dir "$ETCD_DATA" \
			--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
			--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
			--initial-cluster "haade=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn
	fi
	wait_until etcd 60 "etcd /health" etcd_healthy
}

start_apiserver() {
	if is_running kube-apiserver; then
		wait_until kube-apiserver "$START_TIMEOUT" "$SERVER_URL/readyz" ready
		return 0
	fi
	ensure_port_free kube-apiserver "$APISERVER_HOST" "$APISERVER_PORT"
	local bind="$APISERVER_HOST" advertise="$APISERVER_HOST"
	if [[ -n "$APISERVER_ADVERTISE" ]]; then
		# Every address of the network namespace it runs in: loopback for the node's own
		# processes, the node's address for pods (through the kubernetes Service).
		bind=0.0.0.0 advertise="$APISERVER_ADVERTISE"
	fi
	log "starting kube-apiserver $K8S_VERSION on $SERVER_URL (advertised as $advertise)"
	spawn kube-apiserver "$BIN_DIR/kube-apiserver" \
		--bind-address="$bind" --advertise-address="$advertise" --secure-port="$APISERVER_PORT" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--cert-dir="$RUN_DIR/certs" \
		--tls-cert-file="$PKI/server.crt" --tls-private-key-file="$PKI/server.key" \
		--client-ca-file="$PKI/ca.crt" --anonymous-auth=false \
		--kubelet-client-certificate="$PKI/admin.crt" --kubelet-client-key="$PKI/admin.key" \
		--kubelet-preferred-address-types=InternalIP \
		--authorization-mode=RBAC \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
		--service-cluster-ip-range=10.96.0.0/16 \
		--profiling=false --v=1
	wait_until kube-apiserver "$START_TIMEOUT" "$SERVER_URL/readyz" ready
}

start() {
	install
	mkdir -p "$RUN_DIR"
	make_pki
	write_kubeconfig
	local t0=$SECONDS
	start_etcd
	start_apiserver
	log "ready at $SERVER_URL in $((SECONDS - t0))s (pid $(pid_of kube-apiserver)); KUBECONFIG=$KUBECONFIG_FILE"
}

stop() {
	stop_pid kube-apiserver 30
	stop_pid etcd 30
}

reset() {
	stop
	log "deleting $RUN_DIR"
	rm -rf "$RUN_DIR"
}

status() {
	if is_running kube-apiserver && ready; then
		echo "apiserver: kube-apiserver $K8S_VERSION ready (pid $(pid_of kube-apiserver)) at $SERVER_URL; KUBECONFIG=$KUBECONFIG_FILE"
		return 0
	elif is_running kube-apiserver || is_running etcd; then
		echo "apiserver: running, but $SERVER_URL/readyz is not ok (kube-apiserver pid $(pid_of kube-apiserver || echo -), etcd pid $(pid_of etcd || echo -))"
		return 1
	fi
	echo "apiserver: stopped"
	return 3
}

print_env() {
	cat <<EOF
export KUBECONFIG=$KUBECONFIG_FILE
export HAADE_KUBECTL=$BIN_DIR/kubectl
EOF
}

# One start or stop at a time per $HAADE_RUN.
lock="apiserver-service-$(printf '%s' "$HAADE_RUN" | sha256sum | cut -c1-12)"
case "${1:-}" in
install) install ;;
start) with_lock "$lock" start ;;
stop) with_lock "$lock" stop ;;
reset) with_lock "$lock" reset ;;
status) status ;;
env) print_env ;;
*) echo "usage: $0 install|start|stop|reset|status|env" >&2; exit 2 ;;
esac
