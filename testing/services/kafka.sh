#!/usr/bin/env bash
# Apache Kafka for the end-to-end tier: one KRaft node that is both broker and controller.
#
#   kafka.sh install                      fetch the jars with Maven into the cache (once)
#   kafka.sh start                        install if needed, format storage on first start,
#                                         start, wait until it serves metadata, and create
#                                         topic fintech.debt.raw with 8 partitions
#   kafka.sh stop                         stop it; the data dir stays
#   kafka.sh restart                      stop, then start, keeping the data (outage tests)
#   kafka.sh status                       exit 0 when running and answering, 3 when stopped
#   kafka.sh create-topic NAME PARTITIONS create a topic unless it exists
#   kafka.sh topics ARGS...               kafka-topics.sh (bootstrap server filled in)
#   kafka.sh console-producer ARGS...     kafka-console-producer.sh (bootstrap server filled in)
#   kafka.sh console-consumer ARGS...     kafka-console-consumer.sh (bootstrap server filled in)
#   kafka.sh run-class CLASS ARGS...      any class on Kafka's class path
#   kafka.sh reset                        stop and delete the data dir
#   kafka.sh secure-env                   (KAFKA_SECURE=1) print export lines for the SASL_SSL
#                                         listener: bootstrap, CA file, users and passwords
#
# Broker 127.0.0.1:9092, controller 127.0.0.1:9093, plaintext, no authentication.
#
# KAFKA_SECURE=1 adds, on every start, a SASL_SSL listener on 127.0.0.1:${KAFKA_SECURE_PORT:-9094}:
# TLS with a certificate for 127.0.0.1 signed by a CA made here (openssl, into
# $HAADE_RUN/kafka/tls; clients trust ca.pem or truststore.p12), SCRAM-SHA-512 logins, and
# Kafka's StandardAuthorizer with allow.everyone.if.no.acl.found=false. Two SCRAM users:
#   admin         a super user
#   haade-bronze  Read+Describe on topic fintech.debt.raw and Read on the consumer groups
#                 whose names start with "bronze" (bronze's pipeline id), nothing else
# The PLAINTEXT and CONTROLLER listeners stay as they are for the other tests: their
# unauthenticated principal (User:ANONYMOUS) is a super user, so only the SASL_SSL listener is
# least privilege. Without KAFKA_SECURE nothing changes.
set -euo pipefail
SERVICE=kafka
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_VERSION="${KAFKA_VERSION:-4.1.2}" # org.apache.kafka:kafka_2.13 on Maven Central
LOG4J_VERSION="2.24.3"                  # the Log4j 2 that Kafka 4.1 ships with
KAFKA_HOST=127.0.0.1
KAFKA_PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HEAP="${KAFKA_HEAP:--Xmx512m -Xms128m}"
DEFAULT_TOPIC=fintech.debt.raw
DEFAULT_PARTITIONS=8
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
KAFKA_SECURE="${KAFKA_SECURE:-0}"
SECURE_PORT="${KAFKA_SECURE_PORT:-9094}"
ADMIN_USER=admin
ADMIN_PASSWORD="${KAFKA_ADMIN_PASSWORD:-haade-admin-secret}"
BRONZE_USER=haade-bronze
BRONZE_PASSWORD="${KAFKA_BRONZE_PASSWORD:-haade-bronze-secret}"
BRONZE_GROUP_PREFIX="${KAFKA_BRONZE_GROUP_PREFIX:-bronze}"

LIBS="$HAADE_CACHE/kafka/$KAFKA_VERSION/libs"
HOME_DIR="$HAADE_RUN/kafka"
DATA_DIR="$HOME_DIR/data"
CONF="$HOME_DIR/server.properties"
LOG4J_CONF="$HOME_DIR/log4j2.properties"
TOOLS_LOG4J_CONF="$HOME_DIR/tools-log4j2.properties"
BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"
SECURE_BOOTSTRAP="$KAFKA_HOST:$SECURE_PORT"
TLS_DIR="$HOME_DIR/tls"
STORE_PASSWORD="${KAFKA_STORE_PASSWORD:-haade-store-secret}"
ADMIN_CLIENT_CONF="$TLS_DIR/admin-client.properties"
BRONZE_CLIENT_CONF="$TLS_DIR/bronze-client.properties"
JAVA="${JAVA:-java}"

fetch_jars() {
	[[ -f "$LIBS/.complete" ]] && return 0
	log "fetching Kafka $KAFKA_VERSION jars with Maven into $LIBS (once)"
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	rm -rf "$LIBS"
	mkdir -p "$LIBS"
	mvn_run "$LOG_DIR/kafka-fetch.log" -f "$SERVICES_DIR/kafka/pom.xml" \
		-Dkafka.version="$KAFKA_VERSION" -Dlog4j.version="$LOG4J_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS"
	ls "$LIBS"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null || die "Maven did not bring kafka_2.13-$KAFKA_VERSION.jar"
	touch "$LIBS/.complete"
}

install() {
	"$JAVA" -version >/dev/null 2>&1 || die "no java on PATH (Kafka $KAFKA_VERSION needs Java 17+)"
	with_lock "kafka-$KAFKA_VERSION" fetch_jars
}

# run_class CLASS ARGS...: a short-lived JVM with Kafka's class path, for the tools.
run_class() {
	local cls="$1"; shift
	"$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$TOOLS_LOG4J_CONF" -Dkafka.logs.dir="$LOG_DIR" \
		-cp "$LIBS/*" "$cls" "$@"
}

write_config() {
	mkdir -p "$HOME_DIR" "$DATA_DIR"
	cat >"$CONF" <<EOF
# Written by testing/services/kafka.sh; rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$KAFKA_HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA_DIR
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
log.retention.hours=168
EOF
	if secure; then write_secure_config; fi
	# Log4j 2, properties format: INFO to the service log (stdout is redirected there).
	cat >"$LOG4J_CONF" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
EOF
	# The tools: warnings only, on stderr, so that their stdout is only their answer.
	cat >"$TOOLS_LOG4J_CONF" <<'EOF'
status = warn
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = err
EOF
}

secure() { [[ "$KAFKA_SECURE" == 1 ]]; }

# make_tls: a CA and a broker certificate for 127.0.0.1 and localhost, once per $HAADE_RUN;
# ca.pem for Go and kcat clients, truststore.p12 for Java ones, broker.p12 for the broker.
make_tls() {
	[[ -s "$TLS_DIR/broker.p12" && -s "$TLS_DIR/truststore.p12" ]] && return 0
	command -v openssl >/dev/null || die "openssl is not installed (apt-get install -y openssl)"
	command -v keytool >/dev/null || die "keytool is not installed (it comes with the JDK)"
	log "making a test CA and a broker certificate in $TLS_DIR"
	rm -rf "$TLS_DIR"
	mkdir -p "$TLS_DIR"
	local lf="$LOG_DIR/kafka-tls.log"
	{
		openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=haade test CA" \
			-keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.pem" &&
			openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=127.0.0.1" \
				-keyout "$TLS_DIR/broker.key" -out "$TLS_DIR/broker.csr" &&
			printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' >"$TLS_DIR/broker.ext" &&
			openssl x509 -req -sha256 -days 3650 -in "$TLS_DIR/broker.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" \
				-CAcreateserial -extfile "$TLS_DIR/broker.ext" -out "$TLS_DIR/broker.pem" &&
			openssl pkcs12 -export -name broker -in "$TLS_DIR/broker.pem" -inkey "$TLS_DIR/broker.key" \
				-certfile "$TLS_DIR/ca.pem" -passout "pass:$STORE_PASSWORD" -out "$TLS_DIR/broker.p12" &&
			keytool -importcert -noprompt -alias haade-ca -file "$TLS_DIR/ca.pem" -storetype PKCS12 \
				-keystore "$TLS_DIR/truststore.p12" -storepass "$STORE_PASSWORD"
	} >"$lf" 2>&1 || { tail_log "$lf"; rm -rf "$TLS_DIR"; die "making the TLS files failed"; }
	chmod 600 "$TLS_DIR"/*.key "$TLS_DIR"/*.p12
}

# client_conf FILE USER PASSWORD: a Java client's properties for the SASL_SSL listener.
client_conf() {
	cat >"$1" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$2" password="$3";
ssl.truststore.location=$TLS_DIR/truststore.p12
ssl.truststore.type=PKCS12
ssl.truststore.password=$STORE_PASSWORD
EOF
	chmod 600 "$1"
}

write_secure_config() {
	make_tls
	client_conf "$ADMIN_CLIENT_CONF" "$ADMIN_USER" "$ADMIN_PASSWORD"
	client_conf "$BRONZE_CLIENT_CONF" "$BRONZE_USER" "$BRONZE_PASSWORD"
	# Later keys win in Java properties: these replace the plaintext-only lines above.
	cat >>"$CONF" <<EOF

# KAFKA_SECURE=1: a SASL_SSL listener with SCRAM-SHA-512 and ACLs.
listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,CONTROLLER://$KAFKA_HOST:$CONTROLLER_PORT,SASL_SSL://$KAFKA_HOST:$SECURE_PORT
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$KAFKA_PORT,SASL_SSL://$KAFKA_HOST:$SECURE_PORT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$TLS_DIR/broker.p12
ssl.keystore.password=$STORE_PASSWORD
ssl.key.password=$STORE_PASSWORD
ssl.client.auth=none
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS;User:$ADMIN_USER
EOF
}

# secure_ready: the admin user logs in over SASL_SSL and lists topics.
secure_ready() {
	run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$SECURE_BOOTSTRAP" \
		--command-config "$ADMIN_CLIENT_CONF" --list
}

# make_users_and_acls: the SCRAM users and haade-bronze's ACLs, idempotent, through the
# plaintext listener (whose principal is a super user).
make_users_and_acls() {
	local lf="$LOG_DIR/kafka-acls.log" u p
	: >"$lf"
	for u in "$ADMIN_USER" "$BRONZE_USER"; do
		p="$ADMIN_PASSWORD"
		[[ "$u" == "$BRONZE_USER" ]] && p="$BRONZE_PASSWORD"
		run_class kafka.admin.ConfigCommand --bootstrap-server "$BOOTSTRAP" --alter --entity-type users \
			--entity-name "$u" --add-config "SCRAM-SHA-512=[iterations=8192,password=$p]" >>"$lf" 2>&1 ||
			{ tail_log "$lf"; die "could not create the SCRAM user $u"; }
	done
	run_class org.apache.kafka.tools.AclCommand --bootstrap-server "$BOOTSTRAP" --add \
		--allow-principal "User:$BRONZE_USER" --operation Read --operation Describe \
		--topic "$DEFAULT_TOPIC" >>"$lf" 2>&1 || { tail_log "$lf"; die "could not add the topic ACLs of $BRONZE_USER"; }
	run_class org.apache.kafka.tools.AclCommand --bootstrap-server "$BOOTSTRAP" --add \
		--allow-principal "User:$BRONZE_USER" --operation Read \
		--group "$BRONZE_GROUP_PREFIX" --resource-pattern-type prefixed >>"$lf" 2>&1 ||
		{ tail_log "$lf"; die "could not add the group ACL of $BRONZE_USER"; }
	log "SASL_SSL on $SECURE_BOOTSTRAP: users $ADMIN_USER (super user) and $BRONZE_USER (read $DEFAULT_TOPIC, groups $BRONZE_GROUP_PREFIX*)"
}

start_secure() {
	secure || return 0
	grep -q "SASL_SSL://" "$CONF" 2>/dev/null ||
		die "Kafka is running without its SASL_SSL listener: run kafka.sh restart with KAFKA_SECURE=1"
	make_users_and_acls
	wait_until kafka "$START_TIMEOUT" "a SASL_SSL login as $ADMIN_USER on $SECURE_BOOTSTRAP" secure_ready
}

print_secure_env() {
	secure || die "secure-env needs KAFKA_SECURE=1"
	[[ -s "$TLS_DIR/ca.pem" ]] || die "no $TLS_DIR/ca.pem yet: run KAFKA_SECURE=1 kafka.sh start"
	cat <<EOF
export KAFKA_SECURE_BOOTSTRAP=$SECURE_BOOTSTRAP
export KAFKA_SECURE_CA=$TLS_DIR/ca.pem
export KAFKA_SECURE_TRUSTSTORE=$TLS_DIR/truststore.p12
export KAFKA_ADMIN_USER=$ADMIN_USER
export KAFKA_ADMIN_PASSWORD=$ADMIN_PASSWORD
export KAFKA_ADMIN_CLIENT_CONF=$ADMIN_CLIENT_CONF
export KAFKA_BRONZE_USER=$BRONZE_USER
export KAFKA_BRONZE_PASSWORD=$BRONZE_PASSWORD
export KAFKA_BRONZE_CLIENT_CONF=$BRONZE_CLIENT_CONF
EOF
}

format_storage() {
	[[ -f "$DATA_DIR/meta.properties" ]] && return 0
	local id_file="$HOME_DIR/cluster.id" id
	if [[ ! -s "$id_file" ]]; then
		run_class kafka.tools.StorageTool random-uuid | grep -E '^[A-Za-z0-9_-]{22}$' | tail -n1 >"$id_file" || true
	fi
	id="$(tr -d '[:space:]' <"$id_file")"
	[[ "$id" =~ ^[A-Za-z0-9_-]{22}$ ]] || die "kafka-storage random-uuid gave no cluster id (got '$id')"
	log "formatting KRaft storage in $DATA_DIR (cluster id $id)"
	run_class kafka.tools.StorageTool format -t "$id" -c "$CONF" >>"$(log_file kafka)" 2>&1 ||
		fail_with_log "$(log_file kafka)" "kafka-storage format failed"
}

# ready: the broker answers a metadata request.
ready() {
	run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --list
}

start() {
	install
	if is_running kafka; then
		wait_until kafka "$START_TIMEOUT" "a metadata request to $BOOTSTRAP" ready
		log "already running (pid $(pid_of kafka)) at $BOOTSTRAP"
		create_topic "$DEFAULT_TOPIC" "$DEFAULT_PARTITIONS"
		start_secure
		return 0
	fi
	ensure_port_free kafka "$KAFKA_HOST" "$KAFKA_PORT"
	ensure_port_free kafka "$KAFKA_HOST" "$CONTROLLER_PORT"
	if secure; then ensure_port_free kafka "$KAFKA_HOST" "$SECURE_PORT"; fi
	write_config
	format_storage
	log "starting Kafka $KAFKA_VERSION on $BOOTSTRAP (controller :$CONTROLLER_PORT), data in $DATA_DIR"
	# shellcheck disable=SC2086 # KAFKA_HEAP holds several options
	spawn kafka "$JAVA" $KAFKA_HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$LOG4J_CONF" -Dkafka.logs.dir="$LOG_DIR" \
		-cp "$LIBS/*" kafka.Kafka "$CONF"
	wait_for_port kafka "$KAFKA_HOST" "$KAFKA_PORT" "$START_TIMEOUT"
	wait_until kafka "$START_TIMEOUT" "a metadata request to $BOOTSTRAP" ready
	create_topic "$DEFAULT_TOPIC" "$DEFAULT_PARTITIONS"
	start_secure
	log "ready at $BOOTSTRAP (pid $(pid_of kafka))"
}

# create_topic NAME PARTITIONS: idempotent; warns when it exists with another partition count.
create_topic() {
	local name="$1" partitions="$2" out have
	[[ "$partitions" =~ ^[0-9]+$ ]] || die "PARTITIONS must be a number, got '$partitions'"
	if ! out="$(run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" \
		--create --if-not-exists --topic "$name" --partitions "$partitions" --replication-factor 1 2>&1)"; then
		echo "$out" >&2
		die "could not create topic $name"
	fi
	have="$(run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" \
		--describe --topic "$name" 2>/dev/null | sed -n 's/.*PartitionCount: *\([0-9]*\).*/\1/p' | head -n1)"
	if [[ "$have" != "$partitions" ]]; then
		log "WARNING: topic $name exists with ${have:-?} partitions, not $partitions"
	else
		log "topic $name has $partitions partitions"
	fi
}

stop() { stop_pid kafka 60; }

status() {
	if is_running kafka && ready >/dev/null 2>&1; then
		echo "kafka: running (pid $(pid_of kafka)) at $BOOTSTRAP, data in $DATA_DIR"
		return 0
	elif is_running kafka; then
		echo "kafka: process $(pid_of kafka) alive but $BOOTSTRAP does not answer"
		return 1
	fi
	echo "kafka: stopped"
	return 3
}

need_libs() { [[ -f "$LIBS/.complete" ]] || install; [[ -f "$TOOLS_LOG4J_CONF" ]] || write_config; }

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock kafka-service start ;;
stop) with_lock kafka-service stop ;;
restart) with_lock kafka-service stop; with_lock kafka-service start ;;
status) status ;;
create-topic)
	[[ $# -eq 2 ]] || die "usage: $0 create-topic NAME PARTITIONS"
	need_libs
	create_topic "$1" "$2"
	;;
topics) need_libs; run_class org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" "$@" ;;
console-producer) need_libs; run_class org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$BOOTSTRAP" "$@" ;;
console-consumer) need_libs; run_class org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$BOOTSTRAP" "$@" ;;
run-class) need_libs; run_class "$@" ;;
reset) stop; log "deleting $HOME_DIR"; rm -rf "$HOME_DIR" ;;
secure-env) print_secure_env ;;
*) echo "usage: $0 install|start|stop|restart|status|create-topic NAME PARTITIONS|topics|console-producer|console-consumer|run-class CLASS|reset|secure-env" >&2; exit 2 ;;
esac
