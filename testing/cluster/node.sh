#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, CI's cluster tier (.ci/cluster): Debian's
# containerd and CNI plugins, with kubelet, kube-proxy, kube-controller-manager and
# kube-scheduler built from the same k8s.io/kubernetes module as testing/cluster/apiserver.sh,
# against its server, and CoreDNS from the Go module proxy. k8s/README.md ("What runs for
# real") gives the versions and timings.
#
#   node.sh install   apiserver.sh install, then build kubelet, kube-proxy,
#                     kube-controller-manager, kube-scheduler and CoreDNS into the same cache,
#                     and the pause image; apt-get install containerd, the CNI plugins,
#                     iptables and conntrack (needs the network)
#   node.sh start     apiserver.sh start (reachable from pods at the node's address), then
#                     containerd, kube-controller-manager, kube-scheduler, kube-proxy
#                     (iptables), CoreDNS (the Service kube-system/kube-dns, 10.96.0.10) and
#                     kubelet; waits up to 120 s for the Node to be Ready; then the default
#                     StorageClass "local" and its PersistentVolumes (static hostPath volumes
#                     under the node's directory: no provisioner runs)
#   node.sh load IMAGE...
#                     copies podman's images into the node's containerd (the k8s.io
#                     namespace), skipping those it loaded before with the same id
#   node.sh smoke     a Deployment of 2 pause pods, scheduled and Running, then deleted
#   node.sh stop      stop all four, remove the containers, the kubelet's mount and its
#                     cgroups (apiserver.sh stop stops the server)
#   node.sh status    what is running
#   node.sh operators where the operators the dev overlay's custom resources need could come
#                     from here (Maven Central; no image registry is reachable); exits 1 and
#                     names each one that cannot be had: the blocker of running the overlay
#
# NODE_NETNS names a network namespace (made with `ip netns add NAME; ip netns exec NAME ip
# link set lo up`); everything runs in it through `nsenter --net`, NOT `ip netns exec`: that
# one also mounts a fresh /sys, which has no cgroup mounts, and the kubelet then fails with
# "failed to get mounted cgroup subsystems: failed to find cgroup mounts". The kubelet's
# iptables rules and the CNI bridge stay inside the namespace. Inside it, a veth pair gives the
# node the address 10.200.0.1 (the kubelet refuses a loopback node IP).
#
# What this machine needs (each found by a failure, see k8s/README.md):
#   - failCgroupV1: false (cgroup v1, hybrid);
#   - protectKernelDefaults: true, so the kubelet never sets the host's kernel.panic,
#     kernel.panic_on_oops or vm.overcommit_memory; it then refuses to start unless it reads
#     the values it wants, so it runs in its own mount namespace with files holding them
#     bind-mounted over those /proc/sys entries (the host's values stay as they are);
#   - restrict_oom_score_adj in containerd: the pause container's oom_score_adj -998 needs
#     CAP_SYS_RESOURCE, which this machine does not have;
#   - a locally made pause image (no registry is reachable);
#   - lower eviction thresholds: the shared disk is 88% full, over the default 85%; and no
#     image garbage collection (it removed the pause image when the disk reached 92%);
#   - kube-proxy masquerades all Service traffic (masqueradeAll), so that a pod reaching a
#     Service backed by a pod on the same bridge gets the reply back through the node, and
#     leaves conntrack's limits as the machine has them (maxPerCore 0: it may not set them).
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
# containerd's content and snapshots, and what load put there, outlive a run: loading the
# project's images into a new node took 80-90 s each on this machine (podman save, then
# ctr import), so a warm run finds them there and loads nothing.
IMAGE_STORE="${NODE_IMAGE_STORE:-$HAADE_CACHE/k8s-node/containerd}"
NODE_NAME="${NODE_NAME:-haade-node}"
NODE_NETNS="${NODE_NETNS:-}"
NODE_IP=10.200.0.1
IN_NS=(nsenter "--net=/var/run/netns/$NODE_NETNS")
KC="$RUN_DIR/kubeconfig"
NICE=(nice -n 19)
PAUSE_IMAGE=registry.k8s.io/pause:3.10
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
# The plugins CoreDNS is built with (build_coredns): those the Corefile in start uses.
COREDNS_PLUGINS=(bind cache errors health kubernetes ready)
COREDNS_DIR="$HAADE_CACHE/k8s-apiserver/coredns-$COREDNS_VERSION-$(IFS=-; echo "${COREDNS_PLUGINS[*]}")"
DNS_IP=10.96.0.10
POD_CIDR=10.244.0.0/24
# Static PersistentVolumes: this many, of PV_SIZE each (hostPath: the size is not enforced).
PV_COUNT="${PV_COUNT:-8}"
PV_SIZE="${PV_SIZE:-10Gi}"

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

# No registry is reachable, so the pod sandbox image registry.k8s.io/pause is made here: a
# static Go binary that waits for SIGTERM, in a one-layer OCI archive written by Python.
build_pause() {
	local dir="$BUILD_DIR/pause"
	[[ -f "$dir/pause.tar" ]] && return 0
	mkdir -p "$dir"
	cat >"$dir/main.go" <<'EOF'
// Command pause holds a pod sandbox's namespaces until it is signalled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
EOF
	printf 'module pause\n\ngo 1.26\n' >"$dir/go.mod"
	(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "${NICE[@]}" go build -trimpath -ldflags=-s -o pause .)
	python3 - "$dir/pause" "$dir/pause.tar" "$PAUSE_IMAGE" <<'EOF'
import gzip, hashlib, io, json, sys, tarfile
binpath, out, ref = sys.argv[1:4]
def digest(b): return "sha256:" + hashlib.sha256(b).hexdigest()
def entry(t, name, b, mode=0o644):
    ti = tarfile.TarInfo(name); ti.size = len(b); ti.mode = mode; ti.mtime = 0
    t.addfile(ti, io.BytesIO(b))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as t:
    entry(t, "pause", open(binpath, "rb").read(), 0o755)
layer = buf.getvalue()
layer_gz = gzip.compress(layer, mtime=0)
config = json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
    "rootfs": {"type": "layers", "diff_ids": [digest(layer)]}}).encode()
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config), "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest(layer_gz), "size": len(layer_gz)}]}).encode()
index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": digest(manifest), "size": len(manifest),
    "annotations": {"org.opencontainers.image.ref.name": ref, "io.containerd.image.name": ref}}]}).encode()
with tarfile.open(out, "w") as t:
    entry(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    entry(t, "index.json", index)
    for b in (layer_gz, config, manifest):
        entry(t, "blobs/sha256/" + digest(b)[7:], b)
EOF
}

# CoreDNS from the Go module proxy, with the plugins the node's Corefile uses (below, in
# start) and no others: a main of its own that imports them and runs coremain, as CoreDNS's
# own main does with all of its plugins (core/plugin, generated from plugin.cfg). The cloud
# plugins (route53, azure, clouddns), etcd and the tracing plugin's DataDog SDK were half of
# the build: 588 packages outside the standard library instead of 1,187.
build_coredns() {
	[[ -x "$COREDNS_DIR/bin/coredns" ]] && return 0
	local src="$COREDNS_DIR/src" t0=$SECONDS lf="$LOG_DIR/build-coredns.log" p
	mkdir -p "$src" "$COREDNS_DIR/bin"
	log "building CoreDNS $COREDNS_VERSION (github.com/coredns/coredns) with the plugins ${COREDNS_PLUGINS[*]}"
	printf 'module haade.local/coredns-build\n\ngo 1.26\n' >"$src/go.mod"
	{
		printf '// CoreDNS with the plugins of the node'"'"'s Corefile. Written by HAADE'"'"'s testing/cluster/node.sh.\npackage main\n\nimport (\n'
		for p in "${COREDNS_PLUGINS[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
		printf '\n\t"github.com/coredns/coredns/coremain"\n)\n\nfunc main() { coremain.Run() }\n'
	} >"$src/main.go"
	if ! (cd "$src" && GOFLAGS=-mod=mod GOTOOLCHAIN=local go get "github.com/coredns/coredns@$COREDNS_VERSION" &&
		GOFLAGS="-mod=mod -buildvcs=false -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0 \
			"${NICE[@]}" go build -ldflags "-s -w" -o "$COREDNS_DIR/bin/coredns.tmp" .) >"$lf" 2>&1; then
		tail_log "$lf" 60
		die "building CoreDNS failed"
	fi
	mv "$COREDNS_DIR/bin/coredns.tmp" "$COREDNS_DIR/bin/coredns"
	log "built CoreDNS in $((SECONDS - t0))s"
	echo "coredns $((SECONDS - t0))s" >>"$BUILD_DIR/build-times"
}

install() {
	if ! command -v containerd >/dev/null || [[ ! -x /usr/lib/cni/bridge ]] || ! command -v iptables >/dev/null ||
		! command -v conntrack >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends containerd containernetworking-plugins \
			iptables conntrack
	fi
	"$APISERVER" install
	build_pause
	build_one kubelet k8s.io/kubernetes/cmd/kubelet
	build_one kube-proxy k8s.io/kubernetes/cmd/kube-proxy
	build_one kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
	build_one kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
	build_coredns
}

write_configs() {
	mkdir -p "$NODE_DIR"/{containerd/state,cni,kubelet,manifests} "$IMAGE_STORE/root"
	cat >"$NODE_DIR/containerd.toml" <<EOF
version = 2
root = "$IMAGE_STORE/root"
state = "$NODE_DIR/containerd/state"
[grpc]
  address = "$NODE_DIR/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni"
EOF
	cat >"$NODE_DIR/cni/10-haade.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "haade", "plugins": [
  {"type": "bridge", "bridge": "haade0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$NODE_DIR/cni-ipam", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
	cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
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
# No image garbage collection: no registry is reachable, so an image it removes (the pause
# image, at 92% of the shared disk) could never come back, and every new pod would fail.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
EOF
	# Replaced only when it changes: kube-proxy exits when its configuration file is rewritten.
	cat >"$NODE_DIR/kube-proxy.yaml.new" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $KC
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables:
  masqueradeAll: true
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
	if cmp -s "$NODE_DIR/kube-proxy.yaml.new" "$NODE_DIR/kube-proxy.yaml"; then
		rm "$NODE_DIR/kube-proxy.yaml.new"
	else
		mv "$NODE_DIR/kube-proxy.yaml.new" "$NODE_DIR/kube-proxy.yaml"
	fi
	cat >"$NODE_DIR/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:8180
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KC
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
EOF
	mkdir -p "$NODE_DIR/sysctl"
	echo 10 >"$NODE_DIR/sysctl/panic"
	echo 1 >"$NODE_DIR/sysctl/panic_on_oops"
	echo 1 >"$NODE_DIR/sysctl/overcommit_memory"
	cat >"$NODE_DIR/kubelet-wrap.sh" <<EOF
#!/bin/bash
# Run by unshare -m: these bind mounts exist in the kubelet's mount namespace only (/proc
# is private there, so they never propagate back to the host's).
set -e
mount --make-rprivate /proc
mount --bind $NODE_DIR/sysctl/panic /proc/sys/kernel/panic
mount --bind $NODE_DIR/sysctl/panic_on_oops /proc/sys/kernel/panic_on_oops
mount --bind $NODE_DIR/sysctl/overcommit_memory /proc/sys/vm/overcommit_memory
exec "\$@"
EOF
	chmod +x "$NODE_DIR/kubelet-wrap.sh"
}

kctl() { "${IN_NS[@]}" "$BIN_DIR/kubectl" --kubeconfig "$KC" "$@"; }
ctr_() { "${IN_NS[@]}" ctr --address "$NODE_DIR/containerd.sock" -n k8s.io "$@"; }

start() {
	if ! ip netns exec "$NODE_NETNS" ip link show hapi0 >/dev/null 2>&1; then
		ip netns exec "$NODE_NETNS" ip link add hapi0 type veth peer name hapi1
		ip netns exec "$NODE_NETNS" ip addr add "$NODE_IP/24" dev hapi0
		ip netns exec "$NODE_NETNS" ip link set hapi0 up
		ip netns exec "$NODE_NETNS" ip link set hapi1 up
	fi
	# A default route: kube-proxy and the kubelet look for the interface of the default
	# route, and the namespace has no other way out.
	ip netns exec "$NODE_NETNS" ip route replace default dev hapi0
	"${IN_NS[@]}" env APISERVER_ADVERTISE="$NODE_IP" "$APISERVER" start
	write_configs
	# A run killed before its stop leaves containerd's sockets behind: the socket file alone
	# would pass for a containerd that answers, so wait for one that does.
	if ! is_running containerd; then
		rm -f "$NODE_DIR/containerd.sock" "$NODE_DIR/containerd.sock.ttrpc"
		spawn containerd "${IN_NS[@]}" containerd --config "$NODE_DIR/containerd.toml"
	fi
	wait_until containerd 30 "containerd answering" ctr_ version
	ctr_ images import "$BUILD_DIR/pause/pause.tar" >/dev/null
	is_running kube-controller-manager || spawn kube-controller-manager "${IN_NS[@]}" "$BIN_DIR/kube-controller-manager" \
		--kubeconfig="$KC" --authentication-kubeconfig="$KC" --authorization-kubeconfig="$KC" \
		--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
		--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
		--use-service-account-credentials=false --controllers='*,-bootstrapsigner,-tokencleaner'
	is_running kube-scheduler || spawn kube-scheduler "${IN_NS[@]}" "$BIN_DIR/kube-scheduler" \
		--kubeconfig="$KC" --authentication-kubeconfig="$KC" --authorization-kubeconfig="$KC" \
		--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false
	is_running kube-proxy || spawn kube-proxy "${IN_NS[@]}" "$BIN_DIR/kube-proxy" --config="$NODE_DIR/kube-proxy.yaml" --v=1
	dns_service
	is_running coredns || spawn coredns "${IN_NS[@]}" "$COREDNS_DIR/bin/coredns" -conf "$NODE_DIR/Corefile"
	wait_until coredns 60 "CoreDNS ready" "${IN_NS[@]}" curl -fsS -o /dev/null --max-time 2 http://127.0.0.1:8181/ready
	# A Node left from an earlier run would look Ready before this kubelet has said anything.
	is_running kubelet || kctl delete node "$NODE_NAME" --ignore-not-found >/dev/null
	# The kubelet's root is a shared mount, and the kubelet's mount namespace keeps it shared
	# (--propagation unchanged): the tmpfs it mounts there for Secret, ConfigMap and projected
	# volumes propagate to the host's namespace, where containerd bind-mounts them into the
	# containers. Without that, those volumes were empty directories in every container.
	mkdir -p "$NODE_DIR/kubelet"
	mountpoint -q "$NODE_DIR/kubelet" || mount --bind "$NODE_DIR/kubelet" "$NODE_DIR/kubelet"
	mount --make-rshared "$NODE_DIR/kubelet"
	is_running kubelet || spawn kubelet "${IN_NS[@]}" unshare -m --propagation unchanged "$NODE_DIR/kubelet-wrap.sh" \
		"$BIN_DIR/kubelet" --config="$NODE_DIR/kubelet.yaml" \
		--kubeconfig="$KC" --root-dir="$NODE_DIR/kubelet" --cert-dir="$NODE_DIR/kubelet/pki" \
		--hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=2
	local deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)); do
		if kctl get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then
			log "node $NODE_NAME is Ready"
			kctl get nodes -o wide >&2
			storage
			return 0
		fi
		is_running kubelet || fail_with_log "$(log_file kubelet)" "kubelet exited"
		sleep 2
	done
	kctl get nodes -o wide >&2 || true
	fail_with_log "$(log_file kubelet)" "node $NODE_NAME not Ready within 120 s"
}

# dns_service: the Service kube-system/kube-dns at $DNS_IP (the kubelet's clusterDNS), backed
# by CoreDNS on the node's address through an EndpointSlice of its own, as a Service without
# a selector has. It also keeps $DNS_IP from being given to another Service.
dns_service() {
	kctl apply --server-side --field-manager=haade-node -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: $DNS_IP
  ports:
    - {name: dns, port: 53, protocol: UDP, targetPort: 53}
    - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: haade-node}
addressType: IPv4
endpoints:
  - addresses: ["$NODE_IP"]
    conditions: {ready: true}
ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

# storage: the default StorageClass "local" (no provisioner) and $PV_COUNT hostPath
# PersistentVolumes under the node's directory, world-writable (the pods run as several
# non-root users, and fsGroup does not apply to hostPath). Retained: a claim's data stays
# until the node's directory goes.
storage() {
	local i dir
	{
		cat <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
		for ((i = 0; i < PV_COUNT; i++)); do
			dir="$NODE_DIR/pv/pv$i"
			mkdir -p "$dir"
			chmod 1777 "$dir"
			cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: haade-node-pv$i
spec:
  storageClassName: local
  capacity: {storage: $PV_SIZE}
  accessModes: [ReadWriteOnce, ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: $dir, type: Directory}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - {key: kubernetes.io/hostname, operator: In, values: [$NODE_NAME]}
EOF
		done
	} | kctl apply --server-side --field-manager=haade-node -f - >/dev/null
	log "StorageClass local (default) with $PV_COUNT PersistentVolumes in $NODE_DIR/pv"
}

# load IMAGE...: podman's images into the node's containerd under the same names; an image
# loaded before with the same podman id is skipped.
load() {
	local img id mark t0
	mkdir -p "$IMAGE_STORE/loaded"
	for img in "$@"; do
		id=$(podman image inspect --format '{{.Id}}' "$img" 2>/dev/null) ||
			die "podman has no image $img (testing/cluster/images.sh build)"
		mark="$IMAGE_STORE/loaded/$(printf '%s' "$img" | tr '/:' '__')"
		if [[ "$(cat "$mark" 2>/dev/null)" == "$id" ]] && ctr_ images ls -q "name==$img" | grep -q .; then
			continue
		fi
		t0=$SECONDS
		podman save --format oci-archive "$img" | ctr_ images import --all-platforms - >/dev/null ||
			die "could not import $img into the node's containerd"
		printf '%s' "$id" >"$mark"
		log "loaded $img into the node in $((SECONDS - t0))s"
	done
}

smoke() {
	kctl delete deployment haade-smoke --ignore-not-found --wait=true >/dev/null
	kctl create deployment haade-smoke --image="$PAUSE_IMAGE" --replicas=2 >/dev/null
	kctl patch deployment haade-smoke --type=json \
		-p '[{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]' >/dev/null
	if ! kctl rollout status deployment/haade-smoke --timeout=120s; then
		kctl get pods -o wide >&2
		kctl get events --field-selector type=Warning >&2
		die "the smoke Deployment did not become available"
	fi
	kctl get pods -o wide >&2
	kctl delete deployment haade-smoke --wait=true >/dev/null
	log "2 pods scheduled on $NODE_NAME and Running; deleted again"
}

# prune_images removes from the kept image store every image but the ones .ci/cluster loads
# (localhost/*:dev, localhost/haade:rollout) and the sandbox's pause image: the per-commit
# tags of the GitOps test and Skaffold's per-build tags (1.2 GB each for HAADE's) grew it to
# 26 GB in a day, and CI wants 25 GiB free. --sync waits for containerd's garbage collection.
prune_images() {
	local ref digest kept=" " gone=()
	# The CRI plugin also names each image by its ID (sha256:...): such a name goes with the
	# image it names.
	while read -r ref _ digest _; do
		case "$ref" in
		localhost/*:dev | localhost/haade:rollout | "$PAUSE_IMAGE") kept+="$digest " ;;
		esac
	done < <(ctr_ images ls 2>/dev/null | tail -n +2)
	while read -r ref _ digest _; do
		case "$ref" in
		localhost/*:dev | localhost/haade:rollout | "$PAUSE_IMAGE") ;;
		sha256:*) [[ "$kept" == *" $digest "* ]] || gone+=("$ref") ;;
		*) gone+=("$ref") ;;
		esac
	done < <(ctr_ images ls 2>/dev/null | tail -n +2)
	((${#gone[@]} == 0)) && return 0
	ctr_ images rm --sync "${gone[@]}" >/dev/null 2>&1 || true
	log "removed ${#gone[@]} images of earlier builds from the node's image store"
}

stop() {
	local c d
	stop_pid kubelet 30
	stop_pid coredns 10
	stop_pid kube-proxy 10
	stop_pid kube-scheduler 30
	stop_pid kube-controller-manager 30
	if is_running containerd; then
		for c in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$c" || true; done
		sleep 2
		for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ tasks rm -f "$c" >/dev/null 2>&1 || true; ctr_ containers rm "$c" || true; done
		prune_images
	fi
	stop_pid containerd 30
	if mountpoint -q "$NODE_DIR/kubelet"; then umount -R "$NODE_DIR/kubelet"; fi
	# The pods' network namespaces, when the kubelet did not tear their sandboxes down.
	for d in /run/netns/cni-*; do [[ -e "$d" ]] && ip netns del "$(basename "$d")" 2>/dev/null || true; done
	# The sandboxes' /dev/shm mounts containerd leaves in its state directory.
	findmnt -rn -o TARGET | grep "^$NODE_DIR/" | sort -r | while read -r m; do umount "$m" 2>/dev/null || true; done
	# The CNI plugins keep their per-container results there; empty once the pods are gone.
	rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
	for d in /sys/fs/cgroup/*/kubepods; do
		[[ -d "$d" ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

status() {
	local n
	for n in containerd kube-controller-manager kube-scheduler kube-proxy coredns kubelet; do
		if is_running "$n"; then echo "$n: running (pid $(pid_of "$n"))"; else echo "$n: stopped"; fi
	done
}

# The dev overlay's Kafka, KafkaNodePool and KafkaTopic need Strimzi's cluster operator, and its
# FlinkDeployment the Flink Kubernetes operator. Their images are on quay.io and ghcr.io, which
# are not reachable here, so the only source left is Maven Central. It serves both operators'
# API jars (their CRDs, see k8s/crds/regen.sh) but not Strimzi's operator, and the Flink
# operator only up to a version older than the overlay's Flink.
MAVEN="${MAVEN_REPO:-https://repo.maven.apache.org/maven2}"
http_code() { curl -s -o /dev/null -m 30 -w '%{http_code}' "$1" || true; }
operators() {
	local blocked=0 code a newest want versions jar
	for a in cluster-operator topic-operator user-operator operator-common; do
		code=$(http_code "$MAVEN/io/strimzi/$a/maven-metadata.xml")
		echo "io.strimzi:$a on Maven Central: HTTP $code"
	done
	code=$(http_code "$MAVEN/io/strimzi/api/maven-metadata.xml")
	echo "io.strimzi:api (the CRDs' model, no operator) on Maven Central: HTTP $code"
	if [[ "$(http_code "$MAVEN/io/strimzi/cluster-operator/maven-metadata.xml")" != 200 ]]; then
		echo "BLOCKER: Strimzi's cluster operator is not on Maven Central (it ships only as the image quay.io/strimzi/operator); the overlay's Kafka, KafkaNodePool and KafkaTopic would never be reconciled"
		blocked=1
	fi
	newest=$(curl -s -m 30 "$MAVEN/org/apache/flink/flink-kubernetes-operator/maven-metadata.xml" |
		sed -n 's:.*<release>\(.*\)</release>.*:\1:p')
	want=$(sed -n 's/^ *flinkVersion: *//p' "$REPO_ROOT/k8s/base/lakehouse/flink.yaml" | head -n1)
	echo "org.apache.flink:flink-kubernetes-operator, newest on Maven Central: ${newest:-none}; the overlay's flinkVersion: $want"
	if [[ -n "$newest" ]]; then
		jar=$(mktemp)
		curl -s -m 60 -o "$jar" "$MAVEN/org/apache/flink/flink-kubernetes-operator-api/$newest/flink-kubernetes-operator-api-$newest.jar"
		versions=$(unzip -p "$jar" org/apache/flink/kubernetes/operator/api/spec/FlinkVersion.class 2>/dev/null |
			grep -ao 'v1_[0-9]*' | sort -t_ -k2 -n -u | tr '\n' ' ')
		rm -f "$jar"
		echo "  its FlinkVersion: ${versions:-unreadable}"
	fi
	if [[ -z "$newest" || " $versions " != *" $want "* ]]; then
		echo "BLOCKER: no Flink Kubernetes operator on Maven Central knows flinkVersion $want"
		blocked=1
	fi
	return "$blocked"
}

need_netns() {
	[[ -n "$NODE_NETNS" && -e "/var/run/netns/$NODE_NETNS" ]] ||
		die "NODE_NETNS must name a network namespace (ip netns add NAME); got '$NODE_NETNS'"
}

case "${1:-}" in
install) install ;;
start | smoke | stop | load) need_netns ;;&
start) start ;;
load) shift; load "$@" ;;
smoke) smoke ;;
stop) stop ;;
status) status ;;
operators) operators ;;
*) echo "usage: $0 install|start|load IMAGE...|smoke|stop|status|operators" >&2; exit 2 ;;
esac
