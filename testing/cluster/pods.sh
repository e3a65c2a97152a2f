#!/usr/bin/env bash
# Runs the dev overlay's workloads as podman pods: one pod (one network
# namespace) per Kubernetes pod, on one podman bridge network, each Service
# name of the overlay (and those the operators would create) resolving to
# its pod's static IP through the pods' hosts files.
#
#   pods.sh up [PART...]    start every pod below and wait until each is ready
#                           (or only the parts: kafka minio postgres flink jobserver)
#   pods.sh submit          run the bronze-submit Job's pod to completion
#                           (exit code and log in $HAADE_RUN/pods/submit-N.log)
#   pods.sh delete-submit   remove the submit pod (kubectl delete job)
#   pods.sh produce ARGS... /opt/haade/produce inside the Kafka pod, on its
#                           in-pod listener (Strimzi's operators reach the
#                           broker the same way)
#   pods.sh kill POD | start POD   podman pod kill / start (e.g. taskmanager-1)
#   pods.sh env             print the published addresses and the catalog's
#                           reader credentials as shell lines (for the test)
#   pods.sh status          the pods and their containers
#   pods.sh down            remove every pod, the network and the state
#
# Every container's command, args, environment, Secrets, ConfigMaps, user,
# read-only root file system and volumes come from `kubectl kustomize
# k8s/overlays/dev` through render.py, never from copies. What an operator
# would make is made here, from the custom resources:
#   - Strimzi (Kafka, KafkaNodePool, KafkaTopic, KafkaUser): one KRaft node
#     with the Kafka's listener (TLS, SCRAM-SHA-512 on 9094), its config and
#     simple authorization; a cluster CA and a broker certificate for the
#     bootstrap and broker Service names; the topic; the SCRAM user with its
#     ACLs and its generated password in Secret/bronze; the CA's public part
#     in Secret/kafka-cluster-ca-cert. A plaintext listener on the pod's
#     127.0.0.1:9092, whose anonymous principal is a super user, stands in
#     for Strimzi's internal replication listener (mTLS, the operators' users).
#   - the Flink operator (FlinkDeployment haade-flink): a JobManager pod and
#     two TaskManager pods, the podTemplates merged by name, the Go worker
#     pool sidecar in each TaskManager pod (EXTERNAL localhost:50000), and
#     config.yaml from flinkConfiguration less Kubernetes HA and the
#     operator's keys (there is no API server).
#
# Pods (network $PODS_NETWORK, subnet $PODS_SUBNET, default 10.213.13.0/24):
#   kafka .10   minio .11 (+ the Jobs minio-bucket .41, minio-pipeline-user .42)
#   postgres .12   jobmanager .20   taskmanager-1 .21   taskmanager-2 .22
#   beam-jobserver .30   bronze-submit .40
# Published on 127.0.0.1 only: Flink's REST 8081, MinIO 9000, PostgreSQL 5432
# (override with PODS_*_PORT). Run it in a network namespace of its own
# (`nsenter --net=/run/netns/NAME`; not `ip netns exec`, which remounts /sys
# and so hides the cgroups podman needs), as root, after images.sh build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SERVICE=pods
# shellcheck source=../services/lib.sh
source "$ROOT/testing/services/lib.sh"

NET=${PODS_NETWORK:-haade-pods}
SUBNET=${PODS_SUBNET:-10.213.13.0/24}
P=${SUBNET%.*}
STATE="$HAADE_RUN/pods"
RENDERED="$STATE/dev.yaml"
OPERATORS="$STATE/operators.yaml" # the Secrets Strimzi would write
CLAIMS="$STATE/claims"
REST_PORT=${PODS_REST_PORT:-8081}
S3_PORT=${PODS_S3_PORT:-9000}
PG_PORT=${PODS_PG_PORT:-5432}
PODMAN=(podman)
RUN_FLAGS=(--runtime=runc)

declare -A IP=(
	[kafka]=$P.10 [minio]=$P.11 [postgres]=$P.12 [jobmanager]=$P.20
	[taskmanager-1]=$P.21 [taskmanager-2]=$P.22 [beam-jobserver]=$P.30
	[bronze-submit]=$P.40 [minio-bucket]=$P.41 [minio-pipeline-user]=$P.42
)
SERVICE_IPS="recovery-kafka-kafka-bootstrap=$P.10 recovery-kafka-kafka-brokers=$P.10 recovery-kafka-dual-role-0=$P.10
minio=$P.11 minio-headless=$P.11 postgres=$P.12 postgres-headless=$P.12 haade-flink=$P.20 haade-flink-rest=$P.20
beam-jobserver=$P.30"
KAFKA_CLUSTER=recovery-kafka
BROKER_HOST=recovery-kafka-dual-role-0.recovery-kafka-kafka-brokers.kafka.svc.cluster.local

pod() { echo "haade-pod-$1"; }

# render ARGS...: render.py on the rendered overlay plus the operators' Secrets.
render() {
	cat "$RENDERED" "$OPERATORS" 2>/dev/null | RENDER_CLAIMS_DIR="$CLAIMS" python3 "$ROOT/testing/cluster/render.py" "$@"
}

# new_pod NAME [podman pod create args]: a pod with its static IP and every Service's host.
new_pod() {
	local name=$1 hosts
	shift
	"${PODMAN[@]}" pod rm -f "$(pod "$name")" >/dev/null 2>&1 || true
	mapfile -t hosts < <(render_hosts)
	"${PODMAN[@]}" pod create --name "$(pod "$name")" --hostname "$name" --network "$NET" --ip "${IP[$name]}" \
		"${hosts[@]}" "$@" >/dev/null
}
render_hosts() { RENDER_SERVICE_IPS="$SERVICE_IPS" render StatefulSet minio minio; }

# run_rendered POD NAME KIND OBJECT CONTAINER [podman run args]: a rendered
# container of a workload, detached, in POD; its volumes under $STATE/vol/POD.
run_rendered() {
	local p=$1 name=$2 kind=$3 obj=$4 ctr=$5 args
	shift 5
	mkdir -p "$STATE/vol/$p"
	chmod 755 "$STATE/vol/$p"
	mapfile -t args < <(RENDER_POD_IP="${IP[$p]}" render "$kind" "$obj" "$ctr" "$STATE/vol/$p")
	((${#args[@]})) || die "render.py gave nothing for $kind $obj $ctr"
	"${PODMAN[@]}" run "${RUN_FLAGS[@]}" -d --pod "$(pod "$p")" --name "$(pod "$p")-$name" "$@" "${args[@]}" >/dev/null
}

# run_job POD KIND OBJECT CONTAINER: a Job's pod, run to completion; fails with its log.
run_job() {
	local p=$1 kind=$2 obj=$3 ctr=$4 args rc=0
	new_pod "$p"
	mkdir -p "$STATE/vol/$p"
	mapfile -t args < <(RENDER_POD_IP="${IP[$p]}" render "$kind" "$obj" "$ctr" "$STATE/vol/$p")
	"${PODMAN[@]}" run "${RUN_FLAGS[@]}" --pod "$(pod "$p")" --name "$(pod "$p")-$ctr" "${args[@]}" \
		>"$LOG_DIR/pod-$p.log" 2>&1 || rc=$?
	((rc == 0)) || fail_with_log "$LOG_DIR/pod-$p.log" "the $obj Job's pod exited $rc"
	log "Job $obj: $(tail -n1 "$LOG_DIR/pod-$p.log")"
}

# listening CONTAINER PORT: whether something listens on PORT in the
# container's pod (read in the pod's network namespace: not every image has a shell).
listening() {
	local hex pid
	hex=$(printf ':%04X' "$2")
	pid=$("${PODMAN[@]}" inspect --format '{{.State.Pid}}' "$1") && [[ $pid != 0 ]] || return 1
	nsenter -t "$pid" -n cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p' | grep -q .
}

# wait_ok SECONDS WHAT CMD...: wait until CMD succeeds, or fail.
wait_ok() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 2
	done
	log "ready: $what"
}

kafka_class() { "${PODMAN[@]}" exec "$(pod kafka)-kafka" java -Dlog4j2.level=WARN -cp '/opt/kafka/libs/*' "$@"; }

# Strimzi's part: the CA, the broker certificate, the listener, the topic, the user.
up_kafka() {
	local tls="$STATE/kafka-tls" extra="$STATE/kafka-conf" storepass lines l
	mkdir -p "$tls" "$extra" "$CLAIMS/kafka-data"
	if [[ ! -s "$tls/broker.p12" ]]; then
		local san="DNS:$BROKER_HOST" f lf="$LOG_DIR/pods-kafka-tls.log"
		for f in recovery-kafka-kafka-bootstrap recovery-kafka-kafka-brokers; do
			san+=",DNS:$f,DNS:$f.kafka,DNS:$f.kafka.svc,DNS:$f.kafka.svc.cluster.local"
		done
		openssl rand -hex 24 >"$tls/storepass"
		storepass=$(cat "$tls/storepass")
		{
			openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 365 -subj "/O=io.strimzi/CN=cluster-ca v0" \
				-keyout "$tls/ca.key" -out "$tls/ca.crt" &&
				openssl req -newkey rsa:2048 -nodes -sha256 -subj "/O=io.strimzi/CN=recovery-kafka-kafka" \
					-keyout "$tls/broker.key" -out "$tls/broker.csr" &&
				printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' "$san" >"$tls/broker.ext" &&
				openssl x509 -req -sha256 -days 365 -in "$tls/broker.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" \
					-CAcreateserial -extfile "$tls/broker.ext" -out "$tls/broker.crt" &&
				openssl pkcs12 -export -name broker -in "$tls/broker.crt" -inkey "$tls/broker.key" \
					-certfile "$tls/ca.crt" -passout "pass:$storepass" -out "$tls/broker.p12"
		} >"$lf" 2>&1 || fail_with_log "$lf" "making the Kafka cluster CA and broker certificate failed"
		rm -f "$tls/broker.csr" "$tls/ca.key"
	fi
	storepass=$(cat "$tls/storepass")
	chown -R 1001:1001 "$tls" "$CLAIMS/kafka-data"
	chmod 700 "$tls"

	# The Kafka's listeners, config and authorization, as Strimzi writes them.
	mapfile -t lines < <(render strimzi "$KAFKA_CLUSTER")
	local listeners="PLAIN://127.0.0.1:9092,CONTROLLER://localhost:9093" adv="PLAIN://127.0.0.1:9092"
	local protos="PLAIN:PLAINTEXT,CONTROLLER:PLAINTEXT" conf="" name port proto mech k kind a b c d e
	for l in "${lines[@]}"; do
		read -r kind a b c d <<<"$l"
		case $kind in
		listener)
			name=$a port=$b proto=$c mech=$d
			listeners+=",$name://0.0.0.0:$port"
			adv+=",$name://$BROKER_HOST:$port"
			protos+=",$name:$proto"
			k=$(tr 'A-Z' 'a-z' <<<"$name")
			if [[ $mech != - ]]; then
				conf+="listener.name.$k.sasl.enabled.mechanisms=$mech"$'\n'
				conf+="listener.name.$k.$(tr 'A-Z' 'a-z' <<<"$mech").sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"$'\n'
			fi
			if [[ $proto == *SSL ]]; then
				conf+="listener.name.$k.ssl.keystore.type=PKCS12"$'\n'
				conf+="listener.name.$k.ssl.keystore.location=/etc/kafka-tls/broker.p12"$'\n'
				conf+="listener.name.$k.ssl.keystore.password=$storepass"$'\n'
				conf+="listener.name.$k.ssl.key.password=$storepass"$'\n'
			fi
			;;
		config) conf+="$a=$b"$'\n' ;;
		authorization)
			case $a in
			simple) conf+="authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"$'\n'"super.users=User:ANONYMOUS"$'\n' ;;
			none) ;;
			*) die "Kafka $KAFKA_CLUSTER: authorization $a is not supported here" ;;
			esac
			;;
		esac
	done
	{
		echo "# What Strimzi would configure for Kafka/$KAFKA_CLUSTER (testing/cluster/pods.sh)."
		echo "listeners=$listeners"
		echo "advertised.listeners=$adv"
		echo "listener.security.protocol.map=$protos"
		printf '%s' "$conf"
	} >"$extra/extra.properties"
	chown -R 1001:1001 "$extra"
	chmod 700 "$extra"

	new_pod kafka
	"${PODMAN[@]}" run "${RUN_FLAGS[@]}" -d --pod "$(pod kafka)" --name "$(pod kafka)-kafka" --user 1001:1001 --read-only \
		--cap-drop=ALL --security-opt=no-new-privileges --tmpfs /tmp:rw,mode=1777 \
		-v "$CLAIMS/kafka-data:/var/lib/kafka" -v "$tls:/etc/kafka-tls:ro" -v "$extra:/etc/kafka-conf:ro" \
		--env KAFKA_CONF_EXTRA=/etc/kafka-conf/extra.properties --env KAFKA_HEAP_OPTS="-Xms512m -Xmx512m" \
		localhost/haade-kafka:dev >/dev/null
	wait_ok 240 "Kafka listens on 9092 (in-pod) and 9094 (TLS, SCRAM-SHA-512)" \
		bash -c "$(declare -f listening); PODMAN=(${PODMAN[*]}); listening $(pod kafka)-kafka 9092 && listening $(pod kafka)-kafka 9094" ||
		{ "${PODMAN[@]}" logs --tail 30 "$(pod kafka)-kafka" >&2; die "Kafka did not start"; }
	wait_ok 120 "Kafka answers metadata" kafka_class org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:9092 --list ||
		die "Kafka does not answer"

	# KafkaTopic, KafkaUser: the topic operator's and the user operator's work.
	local lf="$LOG_DIR/pods-kafka-admin.log" secrets="" kind a b c d e
	: >"$lf"
	for l in "${lines[@]}"; do
		read -r kind a b c d <<<"$l"
		case $kind in
		topic)
			local cfg=() kv
			for kv in $d; do cfg+=(--config "$kv"); done
			kafka_class org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:9092 --create --if-not-exists \
				--topic "$a" --partitions "$b" --replication-factor "$c" "${cfg[@]}" >>"$lf" 2>&1 ||
				fail_with_log "$lf" "creating the topic $a failed"
			log "KafkaTopic $a: $b partitions"
			;;
		user)
			[[ $b == SCRAM-SHA-512 ]] || die "KafkaUser $a: authentication $b is not supported here"
			local pw="$STATE/kafka-user-$a"
			[[ -s "$pw" ]] || (umask 077 && openssl rand -hex 16 >"$pw")
			# The password is never logged: the tool's output goes to a file, and says only "Completed".
			kafka_class kafka.admin.ConfigCommand --bootstrap-server 127.0.0.1:9092 --alter --entity-type users \
				--entity-name "$a" --add-config "SCRAM-SHA-512=[iterations=4096,password=$(cat "$pw")]" >>"$lf" 2>&1 ||
				fail_with_log "$lf" "creating the SCRAM user $a failed"
			secrets+="---
apiVersion: v1
kind: Secret
metadata: {name: $a, namespace: $c, labels: {strimzi.io/kind: KafkaUser, strimzi.io/cluster: $KAFKA_CLUSTER}}
stringData:
  password: \"$(cat "$pw")\"
  sasl.jaas.config: 'org.apache.kafka.common.security.scram.ScramLoginModule required username=\"$a\" password=\"$(cat "$pw")\";'
"
			log "KafkaUser $a: SCRAM-SHA-512, password in Secret $c/$a"
			;;
		acl)
			# acl USER TYPE NAME PATTERN OPERATIONS
			local ops=() op pattern=() res o
			read -r _ _ _ _ d e <<<"$l"
			IFS=, read -ra op <<<"$e"
			for o in "${op[@]}"; do ops+=(--operation "$o"); done
			[[ $d == prefix ]] && pattern=(--resource-pattern-type prefixed)
			case $b in
			topic) res=(--topic "$c") ;;
			group) res=(--group "$c") ;;
			*) die "KafkaUser $a: ACL on $b is not supported here" ;;
			esac
			kafka_class org.apache.kafka.tools.AclCommand --bootstrap-server 127.0.0.1:9092 --add \
				--allow-principal "User:$a" "${ops[@]}" "${res[@]}" "${pattern[@]}" >>"$lf" 2>&1 ||
				fail_with_log "$lf" "adding the ACL of $a on $b $c failed"
			log "ACL: User:$a $(tr ',' ' ' <<<"${op[*]}") on $b $c ($d)"
			;;
		esac
	done
	# The cluster CA's public part, copied to the lakehouse namespace (k8s/README.md).
	(
		umask 077
		printf '%s' "$secrets" >"$OPERATORS"
		cat >>"$OPERATORS" <<EOF
---
apiVersion: v1
kind: Secret
metadata: {name: kafka-cluster-ca-cert, namespace: lakehouse}
stringData:
  ca.crt: |
$(sed 's/^/    /' "$tls/ca.crt")
EOF
	)
}

up_minio() {
	new_pod minio -p "127.0.0.1:$S3_PORT:9000"
	run_rendered minio minio StatefulSet minio minio
	wait_ok 120 "MinIO listens on 9000" listening "$(pod minio)-minio" 9000 ||
		{ "${PODMAN[@]}" logs --tail 20 "$(pod minio)-minio" >&2; die "MinIO did not start"; }
	run_job minio-bucket Job minio-bucket mkbucket
	run_job minio-pipeline-user Job minio-pipeline-user mkbucket
}

up_postgres() {
	new_pod postgres -p "127.0.0.1:$PG_PORT:5432"
	run_rendered postgres postgres StatefulSet postgres postgres
	wait_ok 180 "PostgreSQL: pg_isready (the readiness probe)" \
		"${PODMAN[@]}" exec "$(pod postgres)-postgres" pg_isready --host=127.0.0.1 --port=5432 ||
		{ "${PODMAN[@]}" logs --tail 20 "$(pod postgres)-postgres" >&2; die "PostgreSQL did not start"; }
}

# flink_pod NAME COMPONENT [pod args]: a Flink pod as the operator makes it.
flink_pod() {
	local p=$1 component=$2 conf="$STATE/flink-conf-$1"
	shift 2
	mkdir -p "$conf"
	render flink-conf haade-flink "$component" "${IP[$p]}" >"$conf/config.yaml"
	chmod -R a+rX "$conf"
	new_pod "$p" "$@"
	run_rendered "$p" flink-main-container FlinkDeployment "haade-flink/$component" flink-main-container \
		-v "$conf:/opt/flink-conf-source:ro" --env FLINK_CONF_SOURCE=/opt/flink-conf-source
	if [[ $component == taskmanager ]]; then
		run_rendered "$p" beam-worker-pool FlinkDeployment "haade-flink/$component" beam-worker-pool
	fi
}

rest() { curl -fsS --max-time 10 "http://127.0.0.1:$REST_PORT$1"; }

up_flink() {
	mkdir -p "$CLAIMS/beam-artifacts"
	chown 9999:9999 "$CLAIMS/beam-artifacts"
	flink_pod jobmanager jobmanager -p "127.0.0.1:$REST_PORT:8081"
	wait_ok 240 "the Flink JobManager's REST API" rest /overview ||
		{ "${PODMAN[@]}" logs --tail 30 "$(pod jobmanager)-flink-main-container" >&2; die "the JobManager did not start"; }
	flink_pod taskmanager-1 taskmanager
	flink_pod taskmanager-2 taskmanager
	wait_ok 300 "two TaskManagers registered (REST /overview)" \
		bash -c "curl -fsS --max-time 10 http://127.0.0.1:$REST_PORT/overview | grep -q '\"taskmanagers\":2,'" ||
		{ "${PODMAN[@]}" logs --tail 30 "$(pod taskmanager-1)-flink-main-container" >&2; die "the TaskManagers did not register"; }
}

up_jobserver() {
	new_pod beam-jobserver
	run_rendered beam-jobserver jobserver Deployment beam-jobserver jobserver
	wait_ok 180 "the job server listens on its pod IP ${IP[beam-jobserver]}:8099 and :8098" \
		bash -c "$(declare -f listening); PODMAN=(${PODMAN[*]}); listening $(pod beam-jobserver)-jobserver 8099 && listening $(pod beam-jobserver)-jobserver 8098" ||
		{ "${PODMAN[@]}" logs --tail 30 "$(pod beam-jobserver)-jobserver" >&2; die "the job server did not start"; }
}

up() {
	command -v podman >/dev/null || die "podman is not installed: testing/cluster/images.sh setup"
	local img
	for img in haade haade-kafka haade-minio haade-postgres haade-flink haade-jobserver; do
		"${PODMAN[@]}" image exists "localhost/$img:dev" || die "no image localhost/$img:dev: run testing/cluster/images.sh build"
	done
	mkdir -p "$STATE" "$CLAIMS"
	chmod 755 "$STATE" "$CLAIMS"
	kubectl kustomize "$ROOT/k8s/overlays/dev" >"$RENDERED"
	[[ -f "$OPERATORS" ]] || (umask 077 && : >"$OPERATORS")
	if ! "${PODMAN[@]}" network exists "$NET"; then
		"${PODMAN[@]}" network create --subnet "$SUBNET" "$NET" >/dev/null
	fi
	local t0=$SECONDS parts=("$@") part
	((${#parts[@]})) || parts=(kafka minio postgres flink jobserver)
	for part in "${parts[@]}"; do
		case $part in
		kafka | minio | postgres | flink | jobserver) "up_$part" ;;
		*) die "up: unknown part $part (kafka, minio, postgres, flink, jobserver)" ;;
		esac
	done
	log "the dev overlay runs as pods on $NET ($SUBNET) in $((SECONDS - t0))s"
}

# submit: the bronze-submit Job's pod, run to completion (restartPolicy Never).
submit() {
	local n rc=0
	n=1
	while [[ -e "$STATE/submit-$n.log" ]]; do n=$((n + 1)); done
	new_pod bronze-submit
	mkdir -p "$STATE/vol/bronze-submit"
	local args
	mapfile -t args < <(RENDER_POD_IP="${IP[bronze-submit]}" render Job bronze-submit bronze "$STATE/vol/bronze-submit")
	"${PODMAN[@]}" run "${RUN_FLAGS[@]}" --pod "$(pod bronze-submit)" --name "$(pod bronze-submit)-bronze" "${args[@]}" \
		>"$STATE/submit-$n.log" 2>&1 || rc=$?
	echo "exit $rc" >>"$STATE/submit-$n.log"
	log "bronze-submit #$n exited $rc (log $STATE/submit-$n.log)"
	return "$rc"
}

produce() {
	"${PODMAN[@]}" run "${RUN_FLAGS[@]}" --rm --pod "$(pod kafka)" --user 65532:65532 --read-only --cap-drop=ALL \
		--entrypoint /opt/haade/produce localhost/haade:dev --brokers=127.0.0.1:9092 "$@"
}

print_env() {
	local s
	mkdir -p "$STATE/vol/env"
	s=$(RENDER_POD_IP="${IP[bronze-submit]}" render Job bronze-submit bronze "$STATE/vol/env")
	cat <<EOF
PODS_FLINK_REST=http://127.0.0.1:$REST_PORT
PODS_S3_ENDPOINT=http://127.0.0.1:$S3_PORT
PODS_CATALOG_URI=postgres://haade_bronze@127.0.0.1:$PG_PORT/$(sed -n 's/^--env=POSTGRES_DB=//p' <<<"$s")?sslmode=disable
PODS_CATALOG_PASSWORD=$(sed -n 's/^--env=HAADE_CATALOG_PASSWORD=//p' <<<"$s")
PODS_AWS_ACCESS_KEY_ID=$(sed -n 's/^--env=AWS_ACCESS_KEY_ID=//p' <<<"$s")
PODS_AWS_SECRET_ACCESS_KEY=$(sed -n 's/^--env=AWS_SECRET_ACCESS_KEY=//p' <<<"$s")
PODS_TOPIC=$(sed -n 's/^--env=HAADE_TOPIC=//p' <<<"$s")
PODS_TABLE=$(sed -n 's/^--env=HAADE_TABLE=//p' <<<"$s")
PODS_DLQ_TABLE=$(sed -n 's/^--env=HAADE_DLQ_TABLE=//p' <<<"$s")
PODS_STATE=$STATE
EOF
}

down() {
	local p
	for p in $("${PODMAN[@]}" pod ls --format '{{.Name}}' | grep '^haade-pod-' || true); do
		"${PODMAN[@]}" pod rm -f "$p" >/dev/null 2>&1 || true
	done
	"${PODMAN[@]}" network rm -f "$NET" >/dev/null 2>&1 || true
	rm -rf "$STATE"
	log "down: pods, network $NET and $STATE removed"
}

case "${1:-}" in
up) shift; up "$@" ;;
submit) submit ;;
delete-submit) "${PODMAN[@]}" pod rm -f "$(pod bronze-submit)" >/dev/null ;;
produce) shift; produce "$@" ;;
kill) "${PODMAN[@]}" pod kill "$(pod "${2:?pod}")" >/dev/null ;;
start) "${PODMAN[@]}" pod start "$(pod "${2:?pod}")" >/dev/null ;;
env) print_env ;;
status) "${PODMAN[@]}" ps -a --filter name=haade-pod- --format '{{.Names}}\t{{.Status}}' ;;
down) down ;;
*) echo "usage: $0 up|submit|delete-submit|produce ARGS|kill POD|start POD|env|status|down" >&2; exit 2 ;;
esac
