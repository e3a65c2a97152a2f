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
#
# Broker 127.0.0.1:9092, controller 127.0.0.1:9093, plaintext, no authentication.
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

LIBS="$HAADE_CACHE/kafka/$KAFKA_VERSION/libs"
HOME_DIR="$HAADE_RUN/kafka"
DATA_DIR="$HOME_DIR/data"
CONF="$HOME_DIR/server.properties"
LOG4J_CONF="$HOME_DIR/log4j2.properties"
TOOLS_LOG4J_CONF="$HOME_DIR/tools-log4j2.properties"
BOOTSTRAP="$KAFKA_HOST:$KAFKA_PORT"
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
		return 0
	fi
	ensure_port_free kafka "$KAFKA_HOST" "$KAFKA_PORT"
	ensure_port_free kafka "$KAFKA_HOST" "$CONTROLLER_PORT"
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
*) echo "usage: $0 install|start|stop|restart|status|create-topic NAME PARTITIONS|topics|console-producer|console-consumer|run-class CLASS|reset" >&2; exit 2 ;;
esac
