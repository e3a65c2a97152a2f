#!/usr/bin/env bash
# Runs the images testing/cluster/images.sh builds as the dev overlay runs
# them, and checks that they work. Every container's options come from
# `kubectl kustomize k8s/overlays/dev` through render.py: command, args,
# environment from the rendered Secrets and ConfigMaps, user and group,
# read-only root file system, dropped capabilities; volumes are directories
# owned by the container's user.
# The containers share one podman pod (one network namespace, like a pod;
# every Service name resolves to 127.0.0.1 in it), so nothing is published
# on the host.
#
# Checks:
#   - each image's user is the manifests' (non-root) and it exposes the
#     ports the manifests' containers declare;
#   - MinIO starts read-only as 1000, and the minio-bucket Job's container
#     (haade, mkbucket) creates the bucket warehouse and writes to it;
#   - PostgreSQL initialises and starts read-only as 999; the probe's
#     pg_isready answers and the Secret's user logs in over TCP;
#   - Kafka (KRaft) starts read-only as 1001, and haade's produce creates
#     fintech.debt.raw with 8 partitions and sends 1000 events to it;
#   - the job server starts as 9999 with the Deployment's args and its
#     ConfigMap, and listens on 0.0.0.0:8099;
#   - Flink 1.19: a JobManager and a TaskManager start read-only as 9999
#     with the FlinkDeployment's configuration, and the TaskManager registers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SERVICE=images
# shellcheck source=../services/lib.sh
source "$ROOT/testing/services/lib.sh"

POD=haade-check
RENDERED=$(mktemp)
cleanup() {
	podman pod rm -f "$POD" >/dev/null 2>&1 || true
	rm -f "$RENDERED"
	[[ -n "${pvc:-}" ]] && rm -rf "$pvc"
	return 0
}
trap cleanup EXIT
cleanup_pod() { podman pod rm -f "$POD" >/dev/null 2>&1 || true; }
cleanup_pod

kubectl kustomize "$ROOT/k8s/overlays/dev" >"$RENDERED"
# The volumes: directories owned by each container's user.
pvc=$(mktemp -d)
chmod 755 "$pvc"
# One pod: every container's own address (fieldRef status.podIP) is 127.0.0.1.
render() { RENDER_POD_IP=127.0.0.1 python3 "$ROOT/testing/cluster/render.py" "$@" <"$RENDERED"; }

fails=0
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fails=$((fails + 1)); }

# image_user IMAGE WANT
image_user() {
	local got
	got=$(podman image inspect --format '{{.Config.User}}' "$1")
	[[ "$got" == "$2" ]] && ok "$1 runs as $got" || bad "$1: USER $got, want $2"
}
# image_ports IMAGE PORT...: the image exposes every port.
image_ports() {
	local image=$1 p exposed
	shift
	exposed=$(podman image inspect --format '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}' "$image")
	for p in "$@"; do
		[[ " $exposed " == *" $p/tcp "* ]] || bad "$image does not expose $p (the manifests' containerPort)"
	done
}
image_user localhost/haade:dev 65532:65532
image_ports localhost/haade:dev 9102 50000
image_user localhost/haade-minio:dev 1000:1000
image_ports localhost/haade-minio:dev 9000 9001
image_user localhost/haade-postgres:dev 999:999
image_ports localhost/haade-postgres:dev 5432
image_user localhost/haade-kafka:dev 1001:1001
image_ports localhost/haade-kafka:dev 9092
image_user localhost/haade-jobserver:dev 9999:9999
image_ports localhost/haade-jobserver:dev 8097 8098 8099
image_user localhost/haade-flink:dev 9999:9999
image_ports localhost/haade-flink:dev 6123 8081

# One pod; the hosts of every Service the overlay defines, and the Kafka
# bootstrap name Strimzi would create.
mapfile -t hosts < <(RENDER_HOSTS=1 render StatefulSet minio minio | grep '^--add-host=')
podman pod create --name "$POD" "${hosts[@]}" \
	--add-host=recovery-kafka-kafka-bootstrap.kafka.svc.cluster.local:127.0.0.1 >/dev/null

# run NAME KIND OBJECT CONTAINER [extra podman args]: the rendered container, detached in the pod.
run() {
	local name=$1 kind=$2 obj=$3 ctr=$4
	shift 4
	mapfile -t args < <(render "$kind" "$obj" "$ctr" "$pvc")
	podman run -d --pod "$POD" --name "$POD-$name" "$@" "${args[@]}" >/dev/null
}
# wait_for SECONDS DESCRIPTION COMMAND...
wait_for() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || { bad "$what: not within the deadline"; return 1; }
		sleep 1
	done
	ok "$what"
}

log "MinIO"
run minio StatefulSet minio minio
log "the minio-bucket Job's container"
mapfile -t args < <(render Job minio-bucket mkbucket "$pvc")
if out=$(podman run --rm --pod "$POD" "${args[@]}" 2>&1); then
	ok "mkbucket (haade image, read-only, uid 65532) against MinIO: $(tail -n1 <<<"$out")"
else
	bad "mkbucket failed: $(tail -n3 <<<"$out")"
	podman logs --tail 20 "$POD-minio" >&2 || true
fi

log "PostgreSQL"
run postgres StatefulSet postgres postgres
wait_for 60 "pg_isready (the readiness probe)" podman exec "$POD-postgres" pg_isready --host=127.0.0.1 --port=5432 ||
	podman logs --tail 20 "$POD-postgres" >&2 || true
pg_user=$(render StatefulSet postgres postgres | sed -n 's/^--env=POSTGRES_USER=//p')
pg_db=$(render StatefulSet postgres postgres | sed -n 's/^--env=POSTGRES_DB=//p')
if podman exec "$POD-postgres" bash -c 'PGPASSWORD=$POSTGRES_PASSWORD psql -h 127.0.0.1 -U "$0" -d "$1" -tAc "select 1"' "$pg_user" "$pg_db" | grep -qx 1; then
	ok "the Secret's user $pg_user logs in to $pg_db over TCP with its password"
else
	bad "psql as $pg_user on $pg_db failed"
fi

log "Kafka (KRaft)"
mkdir -p "$pvc/kafka-data"
chown 1001:1001 "$pvc/kafka-data"
podman run -d --pod "$POD" --name "$POD-kafka" --user 1001:1001 --read-only --cap-drop=ALL --security-opt=no-new-privileges \
	-v "$pvc/kafka-data:/var/lib/kafka" --tmpfs /tmp:rw,mode=1777 \
	--env KAFKA_ADVERTISED=recovery-kafka-kafka-bootstrap.kafka.svc.cluster.local:9092 \
	localhost/haade-kafka:dev >/dev/null
# 9092 = 0x2384, listening (0A), on IPv4 or IPv6 (Java binds ::).
wait_for 180 "Kafka listens on 9092" podman exec "$POD-kafka" grep -qE ':2384 0+:0000 0A ' /proc/net/tcp /proc/net/tcp6 ||
	podman logs --tail 20 "$POD-kafka" >&2 || true
brokers=$(sed -n 's/^  HAADE_BROKERS: //p' "$RENDERED" | head -n1)
# The overlay's listener is TLS + SCRAM on 9094, which Strimzi would run
# (testing/cluster/pods.sh does); this check's Kafka has the plaintext 9092.
brokers="${brokers%:*}:9092"
topic=$(sed -n 's/^  HAADE_TOPIC: //p' "$RENDERED" | head -n1)
if out=$(podman run --rm --pod "$POD" --user 65532:65532 --read-only --cap-drop=ALL --entrypoint /opt/haade/produce \
	localhost/haade:dev --brokers="$brokers" --topic="$topic" --partitions-create=8 --replication-factor=1 \
	--count=1000 --connect-timeout=90s 2>&1); then
	ok "produce (haade image) created $topic and sent 1000 events to $brokers"
else
	bad "produce failed: $(tail -n3 <<<"$out")"
	podman logs --tail 20 "$POD-kafka" >&2 || true
fi

log "Beam's Flink job server"
mapfile -t args < <(render Deployment beam-jobserver jobserver "$pvc")
podman run -d --pod "$POD" --name "$POD-jobserver" "${args[@]}" >/dev/null
# 8099 = 0x1FA3, listening (state 0A) on every address (00000000), as
# another pod must reach it.
wait_for 120 "the job server listens on 0.0.0.0:8099 (the Deployment's args)" \
	podman exec "$POD-jobserver" grep -q ' 00000000:1FA3 00000000:0000 0A ' /proc/net/tcp ||
	podman logs --tail 20 "$POD-jobserver" >&2 || true

log "Flink 1.19: a JobManager and a TaskManager"
# Their configuration is the FlinkDeployment's flinkConfiguration, less what
# only the operator on Kubernetes provides (Kubernetes HA, operator keys),
# plus what the operator would set: the JobManager's address, and memory
# sizes (small here). Both share the pod, so the Prometheus reporter takes a
# port range. The S3 credentials are the Secret's, as in the pod template.
flinkconf="$pvc/flink-conf"
mkdir -p "$flinkconf"
python3 - "$RENDERED" "$flinkconf/config.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
fd = next(d for d in docs if d["kind"] == "FlinkDeployment")
conf = {k: v for k, v in fd["spec"]["flinkConfiguration"].items()
        if not k.startswith(("high-availability", "kubernetes."))}
conf.update({
    "jobmanager.rpc.address": "localhost", "rest.port": "8081", "rest.address": "localhost",
    # The FlinkDeployment's sizes (a smaller TaskManager cannot hold its
    # 512m task off-heap).
    "jobmanager.memory.process.size": str(fd["spec"]["jobManager"]["resource"]["memory"]),
    "taskmanager.memory.process.size": str(fd["spec"]["taskManager"]["resource"]["memory"]),
    "metrics.reporter.prom.port": "9249-9250",
})
with open(sys.argv[2], "w") as f:
    for k, v in sorted(conf.items()):
        f.write(f"{k}: {v}\n")
PY
chmod -R a+rX "$flinkconf"
s3env=()
while IFS= read -r line; do s3env+=("$line"); done < <(render Job minio-bucket mkbucket | grep -E '^--env=AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)=')
for role in jobmanager taskmanager; do
	podman run -d --pod "$POD" --name "$POD-$role" --user 9999:9999 --read-only --cap-drop=ALL --security-opt=no-new-privileges \
		--tmpfs /tmp:rw,mode=1777 -v "$flinkconf:/opt/flink-conf-source:ro" --env FLINK_CONF_SOURCE=/opt/flink-conf-source \
		"${s3env[@]}" localhost/haade-flink:dev "$role" >/dev/null
done
overview() {
	podman exec "$POD-jobmanager" bash -c 'exec 3<>/dev/tcp/127.0.0.1/8081; printf "GET /overview HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3; cat <&3'
}
wait_for 180 "the TaskManager registered with the JobManager (REST /overview: 1 TaskManager, 2 slots)" \
	bash -c "$(declare -f overview); POD=$POD; overview | grep -q '\"taskmanagers\":1,.*\"slots-total\":2'" ||
	{ podman logs --tail 20 "$POD-jobmanager" >&2; podman logs --tail 20 "$POD-taskmanager" >&2; } || true

for c in minio postgres kafka jobserver jobmanager taskmanager; do
	state=$(podman inspect --format '{{.State.Status}}' "$POD-$c")
	[[ "$state" == running ]] && ok "$c still running (read-only root file system)" || bad "$c is $state"
done
if ((fails > 0)); then
	die "$fails image checks failed"
fi
log "all image checks passed"
