#!/usr/bin/env bash
# Builds the images the Kubernetes manifests run, here, with podman: no image
# registry is reachable from this machine, so every base image is built too.
#
#   images.sh setup      install podman, runc and debootstrap (apt), and write
#                        /etc/containers/containers.conf (runc; ulimits this
#                        machine allows) when it is not set up yet
#   images.sh build [haade|services|flink|monitoring|gitops...]
#                        build every image, or the bases and those parts
#                        (cached: an image whose inputs did not change is not
#                        rebuilt)
#   images.sh list       print the images and their tags
#   images.sh skaffold flink|jobserver|flink-operator|kafka
#                        Skaffold's custom builder: builds that image, tags it
#                        $IMAGE, and pushes it when $PUSH_IMAGE is true
#
# Images (all localhost/, tag dev):
#   debian:bookworm   debootstrap --variant=minbase bookworm, imported
#   haade-golang      Debian + this machine's Go toolchain: stands in for golang:1.26.8-bookworm
#   haade-static      CA certificates, time zones, nonroot 65532: stands in for distroless static
#   haade             the project's Dockerfile, with the two above as its base build arguments
#   haade-jre         Debian + openjdk-17-jre-headless
#   haade-minio       the MinIO server testing/services/minio.sh builds
#   haade-kafka       Apache Kafka (testing/services/kafka.sh's jars), KRaft, one combined node
#   haade-postgres    Debian's PostgreSQL 15, with the official image's variables
#   haade-jobserver   Beam 2.62.0's Flink 1.19 job server (testing/services/flink.sh's jars)
#   haade-flink       Flink 1.19.0 from PyPI (testing/services/flinkcluster.sh) on Debian's JRE,
#                     started by the Flink Kubernetes operator (native mode) or standalone
#   haade-flink-operator
#                     the Flink Kubernetes operator 1.7.0 from Maven Central on Debian's JRE
#   haade-prometheus, haade-prometheus-operator, haade-prometheus-config-reloader
#                     Prometheus 3.3.0 and the Prometheus operator v0.85.0 (with its config
#                     reloader), built from the Go module proxy by
#                     testing/monitoring/prometheus.sh, on the static base; the node
#                     overlay runs them (k8s/operators/prometheus)
#   haade-argocd      Argo CD v3.6.1 and kustomize 5.8.3 (testing/gitops/argocd.sh, from the Go
#                     module proxy) with git and tini on Debian (k8s/operators/argocd)
#   haade-redis       Debian's Redis 7.0, Argo CD's cache
#   haade-gitserver   git's git-http-backend behind testing/gitops/gitserver, the git server
#                     Argo CD syncs from on the node (k8s/argocd-node)
#   (gitops is not in the default build: only .ci/gitops runs it)
#
# Needs root, and the network for the first build (Debian's mirror, the Go
# module proxy): run it outside any network namespace. Podman keeps the images
# in /var/lib/containers; the Debian root file system is cached as a tarball in
# $HAADE_CACHE/cluster, so a new podman store does not debootstrap again.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SERVICE=images
# shellcheck source=../services/lib.sh
source "$ROOT/testing/services/lib.sh"

CLUSTER_CACHE="$HAADE_CACHE/cluster"
IMAGES="$ROOT/testing/cluster/images"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CONTAINERS_CONF=/etc/containers/containers.conf
BUILD_FLAGS=(--runtime=runc --layers)
# The host's CA certificates, for HTTPS inside `podman build` (the Go module
# proxy). Only for the HAADE image: apt's ca-certificates cannot configure
# itself over a read-only /etc/ssl/certs, and apt itself uses HTTP.
CERTS=(-v /etc/ssl/certs:/etc/ssl/certs:ro)

setup() {
	if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
		log "installing podman, runc and debootstrap (apt)"
		apt-get update -q >"$LOG_DIR/images-apt.log" 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman runc debootstrap >>"$LOG_DIR/images-apt.log" 2>&1 ||
			fail_with_log "$LOG_DIR/images-apt.log" "apt-get install podman runc debootstrap failed"
	fi
	# crun refuses this machine's hybrid cgroups, and raising rlimits is not
	# permitted: runc, and ulimits no higher than the machine's own.
	if ! grep -qs '^runtime = "runc"' "$CONTAINERS_CONF"; then
		[[ -e "$CONTAINERS_CONF" ]] && cp "$CONTAINERS_CONF" "$CONTAINERS_CONF.before-haade"
		log "writing $CONTAINERS_CONF (runtime runc, ulimits nofile=16384 nproc=32768)"
		mkdir -p "$(dirname "$CONTAINERS_CONF")"
		cat >"$CONTAINERS_CONF" <<-'EOF'
			# Written by HAADE's testing/cluster/images.sh.
			[containers]
			default_ulimits = ["nofile=16384:16384", "nproc=32768:32768"]

			[engine]
			runtime = "runc"
		EOF
	fi
}

# stamp DIR...: a hash of the files' names, sizes and contents (what a build reads).
# Paths are relative to each DIR, so a temporary build context hashes the same.
stamp() {
	local d
	for d in "$@"; do
		(cd "$d" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	done | sha256sum | cut -c1-16
}

# built IMAGE STAMP: whether IMAGE exists with that stamp.
built() {
	[[ "$(podman image inspect --format '{{index .Labels "haade.stamp"}}' "$1" 2>/dev/null)" == "$2" ]]
}

# build NAME CONTEXT [podman build args]: builds testing/cluster/images/NAME
# from CONTEXT as localhost/haade-NAME:dev, unless it is built from the same
# inputs already.
build() {
	local name=$1 ctx=$2 s image t0
	shift 2
	image="localhost/haade-$name:dev"
	s=$(printf '%s %s\n' "$(stamp "$ctx" "$IMAGES/$name")" "$*" | sha256sum | cut -c1-16)
	if built "$image" "$s"; then
		log "$image: up to date"
		return 0
	fi
	log "building $image"
	t0=$SECONDS
	nice -n 10 podman build "${BUILD_FLAGS[@]}" --label "haade.stamp=$s" -f "$IMAGES/$name/Containerfile" -t "$image" "$@" "$ctx" \
		>"$LOG_DIR/image-$name.log" 2>&1 || fail_with_log "$LOG_DIR/image-$name.log" "podman build $image failed"
	log "built $image in $((SECONDS - t0))s"
}

debian() {
	local tar="$CLUSTER_CACHE/debian-bookworm-minbase.tar" dir
	mkdir -p "$CLUSTER_CACHE"
	if [[ ! -s "$tar" ]]; then
		log "debootstrap --variant=minbase bookworm (once; cached in $tar)"
		dir=$(mktemp -d)
		debootstrap --variant=minbase bookworm "$dir" "$DEBIAN_MIRROR" >"$LOG_DIR/debootstrap.log" 2>&1 ||
			fail_with_log "$LOG_DIR/debootstrap.log" "debootstrap failed"
		rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
		tar -C "$dir" -c . >"$tar.tmp" && mv "$tar.tmp" "$tar"
		rm -rf "$dir"
	fi
	local s
	s=$(sha256sum "$tar" | cut -c1-16)
	if ! built localhost/debian:bookworm "$s"; then
		log "podman import localhost/debian:bookworm"
		podman import --change "LABEL haade.stamp=$s" --change 'CMD ["/bin/bash"]' - localhost/debian:bookworm <"$tar" >/dev/null 2>&1
	fi
}

build_bases() {
	setup
	debian
	local goroot
	goroot=$(go env GOROOT)
	[[ "$(go env GOVERSION)" == go1.26.8 ]] || die "the Dockerfile pins Go 1.26.8; this machine has $(go env GOVERSION)"
	local gctx
	gctx=$(mktemp -d)
	cp -al "$goroot" "$gctx/go" 2>/dev/null || cp -a "$goroot" "$gctx/go"
	build golang "$gctx"
	rm -rf "$gctx"
	build static "$IMAGES/static"
	build jre "$IMAGES/jre"
}

build_haade() {
	# The HAADE image, from the project's own Dockerfile. GOPROXY lets the
	# module download read this machine's module cache first.
	log "building localhost/haade:dev from the Dockerfile"
	local t0=$SECONDS mods gocache
	mods=$(go env GOMODCACHE)/cache/download
	# The Dockerfile's build cache (RUN --mount=type=cache,target=/root/.cache/go-build) is,
	# for Debian's podman 4.3 building as root, the folder buildah-cache/root/.cache/go-build
	# under $TMPDIR, else /var/tmp (seen in the build's /proc/PID/mountinfo). It is made a
	# link to this machine's Go build cache: the image's build then reuses the packages that
	# every build of its kind here compiled (cmdtest.Static: no cgo, -trimpath; the toolchain
	# is this machine's, copied into localhost/haade-golang), and they reuse the image's,
	# instead of compiling the whole tree once more.
	gocache="${TMPDIR:-/var/tmp}/buildah-cache/root/.cache/go-build"
	if [[ ! -L "$gocache" ]]; then
		rm -rf "$gocache"
		mkdir -p "$(dirname "$gocache")"
		ln -s "$(go env GOCACHE)" "$gocache"
	fi
	nice -n 10 podman build "${BUILD_FLAGS[@]}" "${CERTS[@]}" -v "$mods:/hostmods:ro" \
		--build-arg GO_IMAGE=localhost/haade-golang:dev \
		--build-arg RUNTIME_IMAGE=localhost/haade-static:dev \
		--build-arg GOPROXY=file:///hostmods,https://proxy.golang.org \
		-t localhost/haade:dev -f "$ROOT/Dockerfile" "$ROOT" >"$LOG_DIR/image-haade.log" 2>&1 ||
		fail_with_log "$LOG_DIR/image-haade.log" "podman build localhost/haade:dev failed"
	log "built localhost/haade:dev in $((SECONDS - t0))s"
}

build_services() {
	"$ROOT/testing/services/minio.sh" install
	local minio ctx
	minio=$(ls -d "$HAADE_CACHE"/minio/*/bin/minio | head -n1)
	ctx=$(mktemp -d)
	cp "$minio" "$ctx/minio"
	build minio "$ctx"
	rm -rf "$ctx"

	"$ROOT/testing/services/kafka.sh" install
	ctx=$(mktemp -d)
	cp -r "$(ls -d "$HAADE_CACHE"/kafka/*/libs | sort -V | tail -n1)" "$ctx/libs"
	cp "$IMAGES/kafka/kafka-kraft.sh" "$ctx/"
	build kafka "$ctx"
	rm -rf "$ctx"

	build postgres "$IMAGES/postgres"
}

build_flink() {
	"$ROOT/testing/services/flink.sh" install
	local beam
	beam=$(ls -d "$HAADE_CACHE"/flink/beam-2.62.0-flink-1.19.0)
	ctx=$(mktemp -d)
	cp -al "$beam/libs" "$ctx/libs" 2>/dev/null || cp -a "$beam/libs" "$ctx/libs"
	cp -a "$beam/plugins" "$ctx/plugins"
	# A jar, not a class directory: a job sent to a remote cluster ships the
	# job server's class path as jars, and a directory on it fails the job
	# ("Problem with jar file /opt/beam/main"). No manifest (M): the same
	# bytes every time, so the image stays cached.
	"${JAR:-jar}" cfM "$ctx/haade-jobserver-main.jar" -C "$beam/patch" JobServerMain.class ||
		die "could not pack JobServerMain.class into a jar"
	cp "$beam/patch-sdfstate/haade-sdfstate.jar" "$ctx/" ||
		die "no $beam/patch-sdfstate/haade-sdfstate.jar: testing/services/flink.sh install builds it"
	build jobserver "$ctx"
	rm -rf "$ctx"

	# Flink's distribution, from PyPI: flinkcluster.sh assembles it.
	if [[ -x "$ROOT/testing/services/flinkcluster.sh" ]]; then
		"$ROOT/testing/services/flinkcluster.sh" install
	fi
	local dist="$HAADE_CACHE/flink/dist-1.19.0"
	[[ -f "$dist/.complete" ]] || die "no Flink 1.19.0 distribution in $dist: testing/services/flinkcluster.sh install assembles it"
	ctx=$(mktemp -d)
	cp -al "$dist" "$ctx/dist" 2>/dev/null || cp -a "$dist" "$ctx/dist"
	mkdir -p "$ctx/dist/plugins/s3-fs-presto"
	cp "$beam/plugins/s3-fs-presto/flink-s3-fs-presto-1.19.0.jar" "$ctx/dist/plugins/s3-fs-presto/"
	cp "$IMAGES/flink/entrypoint.sh" "$ctx/"
	build flink "$ctx"
	rm -rf "$ctx"

	build_operator
}

# The Flink Kubernetes operator: its jars from Maven Central (cached), the image around them.
OPERATOR_VERSION=1.7.0
build_operator() {
	local jars="$HAADE_CACHE/flink-operator/$OPERATOR_VERSION/jars"
	with_lock "flink-operator-$OPERATOR_VERSION" fetch_operator "$jars"
	ctx=$(mktemp -d)
	cp -al "$jars" "$ctx/jars" 2>/dev/null || cp -a "$jars" "$ctx/jars"
	rm -f "$ctx/jars/.complete"
	cp "$IMAGES/flink-operator/entrypoint.sh" "$ctx/"
	build flink-operator "$ctx"
	rm -rf "$ctx"
}

fetch_operator() {
	local jars="$1"
	[[ -f "$jars/.complete" ]] && return 0
	log "fetching the Flink Kubernetes operator $OPERATOR_VERSION's jars with Maven into $jars (once)"
	rm -rf "$jars"
	mkdir -p "$jars"
	mvn_run "$LOG_DIR/flink-operator-fetch.log" -f "$IMAGES/flink-operator/pom.xml" -Doperator.version="$OPERATOR_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$jars"
	[[ -f "$jars/flink-kubernetes-operator-$OPERATOR_VERSION.jar" ]] ||
		die "Maven did not bring flink-kubernetes-operator-$OPERATOR_VERSION.jar"
	touch "$jars/.complete"
}

# Prometheus, its operator and the operator's config reloader: each binary
# on the static base.
build_monitoring() {
	"$ROOT/testing/monitoring/prometheus.sh" install
	local name bin ctx
	for bin in prometheus operator prometheus-config-reloader; do
		name=$bin
		[[ $bin == operator ]] && name=prometheus-operator
		ctx=$(mktemp -d)
		cp "$("$ROOT/testing/monitoring/prometheus.sh" path "$bin")" "$ctx/"
		build "$name" "$ctx"
		rm -rf "$ctx"
	done
}

# Argo CD, its Redis, and the git server it syncs from on the node.
build_gitops() {
	"$ROOT/testing/gitops/argocd.sh" install
	local ctx
	ctx=$(mktemp -d)
	cp "$("$ROOT/testing/gitops/argocd.sh" path argocd)" "$("$ROOT/testing/gitops/argocd.sh" path kustomize)" \
		"$IMAGES/argocd/git-verify-wrapper.sh" "$ctx/"
	build argocd "$ctx"
	rm -rf "$ctx"
	build redis "$IMAGES/redis"
	ctx=$(mktemp -d)
	(cd "$ROOT" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" -o "$ctx/gitserver" ./testing/gitops/gitserver)
	build gitserver "$ctx"
	rm -rf "$ctx"
}

# build_all [haade|services|flink|monitoring|gitops...]: the bases, then the parts asked
# (all but gitops by default).
build_all() {
	local parts=("$@")
	((${#parts[@]})) || parts=(haade services flink monitoring)
	build_bases
	local p
	for p in "${parts[@]}"; do
		case "$p" in
		haade | services | flink | monitoring | gitops) "build_$p" ;;
		*) die "build: unknown part $p (haade, services, flink, monitoring, gitops)" ;;
		esac
	done
}

case "${1:-}" in
setup) setup ;;
build) shift; build_all "$@" ;;
list) podman images --filter reference='localhost/*' ;;
skaffold)
	# Skaffold's custom builder: it sets IMAGE (the artifact's name and tag)
	# and PUSH_IMAGE. Not pushed, the image goes into the node's containerd
	# when testing/cluster/node.sh runs one (skaffold run -p node).
	name="${2:?usage: $0 skaffold haade|flink|jobserver|flink-operator|kafka|minio|postgres|prometheus|prometheus-operator|prometheus-config-reloader}"
	: "${IMAGE:?images.sh skaffold runs under Skaffold, which sets IMAGE}"
	case "$name" in
	haade) build_all haade; src=localhost/haade:dev ;;
	flink | jobserver | flink-operator) build_all flink; src="localhost/haade-$name:dev" ;;
	kafka | minio | postgres) build_all services; src="localhost/haade-$name:dev" ;;
	prometheus | prometheus-operator | prometheus-config-reloader) build_all monitoring; src="localhost/haade-$name:dev" ;;
	*) die "skaffold: unknown image $name (haade, flink, jobserver, flink-operator, kafka, minio, postgres, prometheus, prometheus-operator, prometheus-config-reloader)" ;;
	esac
	podman tag "$src" "$IMAGE"
	# Not pushed, Skaffold deploys NAME:IMAGE_ID (the local image's ID as the tag, the one
	# reference a rebuild cannot reuse), not the tag it asked for: the node gets both.
	id=$(podman image inspect --format '{{.Id}}' "$src")
	podman tag "$src" "${IMAGE%:*}:${id#sha256:}"
	load=("$IMAGE" "${IMAGE%:*}:${id#sha256:}")
	# The operator names the config reloader in its arguments, which Skaffold
	# does not rewrite: the node gets the :dev tag too.
	[[ $name == prometheus-config-reloader ]] && load+=("$src")
	if [[ "${PUSH_IMAGE:-false}" == true ]]; then
		podman push "$IMAGE"
	elif "$ROOT/testing/cluster/node.sh" status 2>/dev/null | grep -q '^kubelet: running'; then
		"$ROOT/testing/cluster/node.sh" load "${load[@]}"
	fi
	;;
*) echo "usage: $0 setup|build|list" >&2; exit 2 ;;
esac
