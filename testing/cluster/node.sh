#!/usr/bin/env bash
# A bounded try at a single-node Kubernetes on this machine (issue 13, the stretch): Debian's
# containerd and CNI plugins plus a kubelet, kube-controller-manager and kube-scheduler built
# from the same k8s.io/kubernetes module as testing/cluster/apiserver.sh, against its server.
# Not part of any CI step; k8s/README.md ("A single node: what was tried") says what happened.
#
#   node.sh install   apiserver.sh install, then build kubelet, kube-controller-manager and
#                     kube-scheduler into the same cache; apt-get install containerd and
#                     containernetworking-plugins (needs the network)
#   node.sh start     apiserver.sh start, then containerd, kube-controller-manager,
#                     kube-scheduler and kubelet; waits up to 120 s for the Node to be Ready
#   node.sh stop      stop all four (apiserver.sh stop stops the server)
#   node.sh status    what is running
#
# The kubelet runs with protectKernelDefaults: it must not change the host's kernel.panic,
# kernel.panic_on_oops or vm.overcommit_memory on a shared machine. Run it in a network
# namespace: the CNI bridge and the kubelet's iptables rules then stay inside it.
set -euo pipefail
SERVICE=node
# shellcheck source=../services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../services/lib.sh"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
APISERVER="$HERE/apiserver.sh"

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
BUILD_DIR="$HAADE_CACHE/k8s-apiserver/kubernetes-$K8S_VERSION"
BIN_DIR="$BUILD_DIR/bin"
RUN_DIR="$HAADE_RUN/k8s-apiserver"
PKI="$RUN_DIR/pki"
NODE_DIR="$HAADE_RUN/k8s-node"
NODE_NAME="${NODE_NAME:-haade-node}"
NICE=(nice -n 19)

build_one() { # build_one NAME PACKAGE
	local name="$1" pkg="$2" t0=$SECONDS lf="$LOG_DIR/build-$1.log"
	[[ -x "$BIN_DIR/$name" ]] && return 0
	log "building $name ($pkg)"
	if ! (cd "$BUILD_DIR/src" && GOFLAGS="-mod=mod -buildvcs=false -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0 \
		"${NICE[@]}" go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION" \
		-o "$BIN_DIR/$name.tmp" "$pkg") >"$lf" 2>&1; then
		tail_log "$lf" 60
		die "building $name failed"
	fi
	mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
	log "built $name in $((SECONDS - t0))s"
	echo "$name $((SECONDS - t0))s" >>"$BUILD_DIR/build-times"
}

install() {
	"$APISERVER" install
	build_one kubelet k8s.io/kubernetes/cmd/kubelet
	build_one kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
	build_one kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
	if ! command -v containerd >/dev/null || [[ ! -x /usr/lib/cni/bridge ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends containerd containernetworking-plugins
	fi
}

write_configs() {
	mkdir -p "$NODE_DIR"/{containerd/root,containerd/state,cni,kubelet,manifests}
	cat >"$NODE_DIR/containerd.toml" <<EOF
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
[grpc]
  address = "$NODE_DIR/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni"
EOF
	cat >"$NODE_DIR/cni/10-haade.conflist" <<'EOF'
{"cniVersion": "1.0.0", "name": "haade", "plugins": [
  {"type": "bridge", "bridge": "haade0", "isGateway": true, "ipMasq": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
	cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
protectKernelDefaults: true
failSwapOn: false
containerRuntimeEndpoint: unix://$NODE_DIR/containerd.sock
staticPodPath: $NODE_DIR/manifests
resolvConf: /etc/resolv.conf
podLogsDir: $NODE_DIR/pod-logs
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
EOF
}

start() {
	"$APISERVER" start
	write_configs
	local kc="$RUN_DIR/kubeconfig"
	is_running containerd || spawn containerd containerd --config "$NODE_DIR/containerd.toml"
	wait_until containerd 30 "containerd socket" test -S "$NODE_DIR/containerd.sock"
	is_running kube-controller-manager || spawn kube-controller-manager "$BIN_DIR/kube-controller-manager" \
		--kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
		--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
		--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
		--use-service-account-credentials=false --controllers='*,-bootstrapsigner,-tokencleaner'
	is_running kube-scheduler || spawn kube-scheduler "$BIN_DIR/kube-scheduler" \
		--kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
		--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false
	is_running kubelet || spawn kubelet "$BIN_DIR/kubelet" --config="$NODE_DIR/kubelet.yaml" \
		--kubeconfig="$kc" --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki" \
		--hostname-override="$NODE_NAME" --node-ip=127.0.0.1 --v=2
	local deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)); do
		if "$BIN_DIR/kubectl" --kubeconfig "$kc" get node "$NODE_NAME" \
			-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then
			log "node $NODE_NAME is Ready"
			return 0
		fi
		is_running kubelet || fail_with_log "$(log_file kubelet)" "kubelet exited"
		sleep 2
	done
	"$BIN_DIR/kubectl" --kubeconfig "$kc" get nodes -o wide >&2 || true
	fail_with_log "$(log_file kubelet)" "node $NODE_NAME not Ready within 120 s"
}

stop() {
	stop_pid kubelet 30
	stop_pid kube-scheduler 30
	stop_pid kube-controller-manager 30
	stop_pid containerd 30
}

status() {
	local n
	for n in containerd kube-controller-manager kube-scheduler kubelet; do
		if is_running "$n"; then echo "$n: running (pid $(pid_of "$n"))"; else echo "$n: stopped"; fi
	done
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
status) status ;;
*) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
