#!/usr/bin/env bash
# The Apache Iceberg sink connector on Kafka Connect (standalone), assembled from Maven Central:
# a contender for the side-by-side benchmark, writing Kafka JSON events to an Iceberg table in
# the same JdbcCatalog `local` (PostgreSQL, V1 layout) and MinIO warehouse as bronze.
#
#   connect.sh install        fetch the worker's and the plugin's jars with Maven, and build the
#                             one-class SMT of connect/src (cached; once)
#   connect.sh prepare --group NAME --table NS.TABLE [--brokers H:P] [--control-topic T]
#                             create the control topic (1 partition) and the table, with bronze's
#                             schema and day(ingested_at) partitioning, unless they exist
#   connect.sh run --topic T --table NS.TABLE --commit-interval-ms MS --group NAME
#                  [--brokers 127.0.0.1:9092] [--tasks 1] [--rest-port 8083]
#                  [--control-topic control-iceberg-NAME] [--max-poll-records 10000]
#                  [--auto-create] [--skip-prepare]
#                             prepare (unless --skip-prepare), then exec Kafka Connect standalone
#                             in the foreground: the caller's child process becomes the JVM, and
#                             SIGTERM stops it. Its log: $HAADE_RUN/logs/connect-NAME.log
#                             (CONNECT_LOG=- keeps it on stdout/stderr instead)
#   connect.sh count --table NS.TABLE [--until N [--timeout S] [--interval S]]
#                             total-records of the current snapshot (pyiceberg); with --until,
#                             poll and print "<s> <rows> <snapshots>" on each change until N
#   connect.sh drop --table NS.TABLE   drop the table (pyiceberg)
#   connect.sh reset --group NAME      delete the worker's state dir for NAME
#   connect.sh status         whether the jars are installed
#   connect.sh classpath      print the worker's class path
#
# NAME is the connector's name: Kafka Connect's consumer group is connect-NAME, the sink's
# control group cg-control-NAME. A new NAME starts from the earliest offsets; the same NAME
# resumes from the offsets its last Iceberg commit recorded. Credentials for MinIO come from
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default minioadmin), the catalog is role haade on
# 127.0.0.1:5432 (HAADE_PG_PORT), MinIO http://127.0.0.1:9000. See connect/README.md.
set -euo pipefail
SERVICE=connect
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONNECT_VERSION="${CONNECT_VERSION:-3.9.2}" # org.apache.kafka:connect-runtime; Iceberg 1.10 builds against Kafka 3.9
SLF4J_VERSION=1.7.36                        # what connect-runtime 3.9 logs through (with reload4j)
ICEBERG_VERSION="${ICEBERG_VERSION:-1.10.1}" # as python.sh pins for Spark
HADOOP_VERSION=3.4.1                        # hadoop-client-api/-runtime: Configuration for the sink and Parquet
POSTGRESQL_JDBC_VERSION=42.7.10
JAVA="${JAVA:-java}"
CONNECT_HEAP="${CONNECT_HEAP:--Xms256m -Xmx1g}"

KEY="connect$CONNECT_VERSION-iceberg$ICEBERG_VERSION-hadoop$HADOOP_VERSION-pg$POSTGRESQL_JDBC_VERSION"
HOME_CACHE="$HAADE_CACHE/connect/$KEY"
RUNTIME_DIR="$HOME_CACHE/runtime"
PLUGIN_DIR="$HOME_CACHE/plugins"
PLUGIN_LIB="$PLUGIN_DIR/iceberg-sink/lib"
SRC_DIR="$SERVICES_DIR/connect/src"
STATE_ROOT="$HAADE_RUN/connect"

PG_PORT="${HAADE_PG_PORT:-5432}"
S3_ENDPOINT="${HAADE_S3_ENDPOINT:-http://127.0.0.1:9000}"

fetch() {
	[[ -f "$HOME_CACHE/.complete" ]] && return 0
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	command -v javac >/dev/null || die "javac is not installed (a JDK 17 is needed)"
	log "fetching Kafka Connect $CONNECT_VERSION and the Iceberg $ICEBERG_VERSION sink with Maven into $HOME_CACHE (once)"
	rm -rf "$HOME_CACHE"
	mkdir -p "$RUNTIME_DIR" "$PLUGIN_LIB"
	mvn_run "$LOG_DIR/connect-fetch.log" -f "$SERVICES_DIR/connect/runtime-pom.xml" \
		-Dconnect.version="$CONNECT_VERSION" -Dslf4j.version="$SLF4J_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$RUNTIME_DIR"
	# Kafka's jars and SLF4J stay out of the plugin: the worker has them, and Connect loads
	# org.apache.kafka and org.slf4j classes from the worker's class path for every plugin.
	mvn_run "$LOG_DIR/connect-fetch.log" -f "$SERVICES_DIR/connect/plugin-pom.xml" \
		-Diceberg.version="$ICEBERG_VERSION" -Dhadoop.version="$HADOOP_VERSION" \
		-Dpostgresql.version="$POSTGRESQL_JDBC_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DexcludeGroupIds=org.apache.kafka,org.slf4j -DoutputDirectory="$PLUGIN_LIB"
	ls "$RUNTIME_DIR/connect-runtime-$CONNECT_VERSION.jar" >/dev/null || die "Maven did not bring connect-runtime-$CONNECT_VERSION.jar"
	ls "$PLUGIN_LIB/iceberg-kafka-connect-$ICEBERG_VERSION.jar" >/dev/null || die "Maven did not bring iceberg-kafka-connect-$ICEBERG_VERSION.jar"
	build_smt
	touch "$HOME_CACHE/.complete"
	log "installed: $(find "$RUNTIME_DIR" -name '*.jar' | wc -l) worker jars, $(find "$PLUGIN_LIB" -name '*.jar' | wc -l) plugin jars ($(du -sh "$HOME_CACHE" | cut -f1))"
}

# build_smt: io.haade.connect.InsertIngestTime, the wall-clock ingested_at (connect/src).
build_smt() {
	local cls="$HOME_CACHE/smt-classes"
	rm -rf "$cls"
	mkdir -p "$cls"
	"${NICE[@]}" javac --release 11 -nowarn -d "$cls" -cp "$RUNTIME_DIR/*" \
		"$SRC_DIR/io/haade/connect/InsertIngestTime.java" || die "javac InsertIngestTime failed"
	cp -r "$SRC_DIR/META-INF" "$cls/"
	(cd "$cls" && jar cf "$PLUGIN_LIB/haade-connect-smt.jar" .) || die "jar failed"
	rm -rf "$cls"
}

install() {
	"$JAVA" -version >/dev/null 2>&1 || die "no java on PATH (Kafka Connect $CONNECT_VERSION needs Java 11+; 17 used here)"
	with_lock "connect-$KEY" fetch
}

# parse_flags "$@": the flags of prepare and run, into globals.
TOPIC="" TABLE="" INTERVAL_MS="" GROUP="" BROKERS="127.0.0.1:9092" TASKS=1 REST_PORT=8083
CONTROL_TOPIC="" MAX_POLL=10000 AUTO_CREATE=false SKIP_PREPARE=false UNTIL="" TIMEOUT=600 POLL_INTERVAL=0.5
parse_flags() {
	while (($#)); do
		case "$1" in
		--topic) TOPIC="$2"; shift 2 ;;
		--table) TABLE="$2"; shift 2 ;;
		--commit-interval-ms) INTERVAL_MS="$2"; shift 2 ;;
		--group) GROUP="$2"; shift 2 ;;
		--brokers) BROKERS="$2"; shift 2 ;;
		--tasks) TASKS="$2"; shift 2 ;;
		--rest-port) REST_PORT="$2"; shift 2 ;;
		--control-topic) CONTROL_TOPIC="$2"; shift 2 ;;
		--max-poll-records) MAX_POLL="$2"; shift 2 ;;
		--auto-create) AUTO_CREATE=true; shift ;;
		--skip-prepare) SKIP_PREPARE=true; shift ;;
		--until) UNTIL="$2"; shift 2 ;;
		--timeout) TIMEOUT="$2"; shift 2 ;;
		--interval) POLL_INTERVAL="$2"; shift 2 ;;
		--topic=* | --table=* | --commit-interval-ms=* | --group=* | --brokers=* | --tasks=* | --rest-port=* | --control-topic=* | --max-poll-records=* | --until=* | --timeout=* | --interval=*)
			local k="${1%%=*}" v="${1#*=}"
			shift
			set -- "$k" "$v" "$@"
			;;
		*) die "unknown flag '$1'" ;;
		esac
	done
	[[ -z "$TABLE" || "$TABLE" =~ ^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$ ]] || die "--table must be NS.TABLE, got '$TABLE'"
	[[ -z "$GROUP" || "$GROUP" =~ ^[A-Za-z0-9._-]+$ ]] || die "--group must be [A-Za-z0-9._-]+, got '$GROUP'"
	[[ -n "$CONTROL_TOPIC" || -z "$GROUP" ]] || CONTROL_TOPIC="control-iceberg-$GROUP"
}

need() { [[ -n "${!1}" ]] || die "$2 is required"; }

pyiceberg() {
	"$SERVICES_DIR/python.sh" python "$SERVICES_DIR/connect/table.py" "$@"
}

prepare() {
	need GROUP --group
	need TABLE --table
	# The coordinator's commits go through this topic, in Kafka transactions; one partition.
	if [[ "$BROKERS" == "127.0.0.1:9092" ]]; then
		"$SERVICES_DIR/kafka.sh" create-topic "$CONTROL_TOPIC" 1
	else
		log "brokers $BROKERS are not kafka.sh's: make sure topic $CONTROL_TOPIC exists"
	fi
	if [[ "$AUTO_CREATE" == false ]]; then
		pyiceberg create "$TABLE" >&2
	fi
}

write_config() {
	local state="$1" worker="$1/worker.properties" connector="$1/connector.properties" l4j="$1/log4j.properties"
	# An idle sink task gets put() (where the sink answers the coordinator's commit requests)
	# once per offset flush interval: 10 s by default, which would delay every commit.
	local FLUSH_MS=500 SESSION_TIMEOUT_MS="${CONNECT_SESSION_TIMEOUT_MS:-6000}"
	((INTERVAL_MS >= FLUSH_MS)) || FLUSH_MS="$INTERVAL_MS"
	local ak="${AWS_ACCESS_KEY_ID:-minioadmin}" sk="${AWS_SECRET_ACCESS_KEY:-minioadmin}" region="${AWS_REGION:-us-east-1}"
	mkdir -p "$state"
	cat >"$worker" <<EOF
# Written by testing/services/connect.sh run; rewritten on every run.
bootstrap.servers=$BROKERS
plugin.path=$PLUGIN_DIR
# every plugin here (Connect's own, the Iceberg sink, our SMT) declares itself in META-INF/services
plugin.discovery=service_load
listeners=http://127.0.0.1:$REST_PORT
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$REST_PORT
offset.storage.file.filename=$state/standalone.offsets
offset.flush.interval.ms=$FLUSH_MS
key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
# the sink task's consumer (group connect-$GROUP)
consumer.auto.offset.reset=earliest
consumer.max.poll.records=$MAX_POLL
consumer.fetch.min.bytes=1
consumer.max.partition.fetch.bytes=4194304
consumer.isolation.level=read_committed
EOF
	cat >"$connector" <<EOF
name=$GROUP
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=$TASKS
topics=$TOPIC
iceberg.tables=$TABLE
iceberg.tables.auto-create-enabled=$AUTO_CREATE
iceberg.tables.evolve-schema-enabled=false
iceberg.control.topic=$CONTROL_TOPIC
iceberg.control.commit.interval-ms=$INTERVAL_MS
iceberg.control.commit.timeout-ms=30000
iceberg.kafka.bootstrap.servers=$BROKERS
# The coordinator's control-topic consumer of a stopped run does not leave its group: the next
# run's coordinator gets the partition (and commits) only when that member's session expires
# (Kafka's default: 45 s). The broker's minimum is 6 s.
iceberg.kafka.session.timeout.ms=$SESSION_TIMEOUT_MS
# JdbcCatalog "local" in the V1 layout that iceberg-go's SQL catalog writes (as Spark reads it)
iceberg.catalog=local
iceberg.catalog.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog
iceberg.catalog.uri=jdbc:postgresql://127.0.0.1:$PG_PORT/lakehouse
iceberg.catalog.jdbc.user=haade
iceberg.catalog.jdbc.password=haade
iceberg.catalog.jdbc.schema-version=V1
iceberg.catalog.warehouse=s3://warehouse/
iceberg.catalog.io-impl=org.apache.iceberg.aws.s3.S3FileIO
iceberg.catalog.s3.endpoint=$S3_ENDPOINT
iceberg.catalog.s3.path-style-access=true
iceberg.catalog.s3.access-key-id=$ak
iceberg.catalog.s3.secret-access-key=$sk
iceberg.catalog.client.region=$region
# bronze's columns besides the event's own: the Kafka coordinates, the record's Kafka timestamp,
# and the wall-clock time the worker handled it (ingested_at)
transforms=kafka,ingest
transforms.kafka.type=org.apache.kafka.connect.transforms.InsertField\$Value
transforms.kafka.topic.field=kafka_topic
transforms.kafka.partition.field=kafka_partition
transforms.kafka.offset.field=kafka_offset
transforms.kafka.timestamp.field=kafka_timestamp
transforms.ingest.type=io.haade.connect.InsertIngestTime
transforms.ingest.field=ingested_at
EOF
	cat >"$l4j" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c:%L)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
log4j.logger.org.apache.kafka.connect.runtime.isolation=WARN
log4j.logger.org.reflections=ERROR
log4j.logger.org.apache.hadoop=WARN
log4j.logger.org.eclipse.jetty=WARN
EOF
}

run() {
	need TOPIC --topic
	need TABLE --table
	need INTERVAL_MS --commit-interval-ms
	need GROUP --group
	[[ "$INTERVAL_MS" =~ ^[0-9]+$ ]] || die "--commit-interval-ms must be a number of milliseconds"
	[[ -f "$HOME_CACHE/.complete" ]] || install
	if port_open 127.0.0.1 "$REST_PORT"; then
		die "127.0.0.1:$REST_PORT (the worker's REST listener) is in use: pass --rest-port"
	fi
	[[ "$SKIP_PREPARE" == true ]] || prepare
	local state="$STATE_ROOT/$GROUP"
	write_config "$state"
	local lf="$LOG_DIR/connect-$GROUP.log"
	if [[ "${CONNECT_LOG:-}" != "-" ]]; then
		log "Kafka Connect $CONNECT_VERSION standalone, Iceberg sink $ICEBERG_VERSION: $TOPIC -> $TABLE every ${INTERVAL_MS}ms (group $GROUP); log $lf"
		printf '\n===== %s starting connect %s =====\n' "$(date -Is)" "$GROUP" >>"$lf"
		exec >>"$lf" 2>&1
	fi
	# exec: the caller's child is the JVM itself. ConnectStandalone must stay the main class and
	# worker.properties its first argument: the sink reads the worker's Kafka settings from there.
	# shellcheck disable=SC2086 # CONNECT_HEAP holds several options
	exec "$JAVA" $CONNECT_HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
		-Dlog4j.configuration="file:$state/log4j.properties" \
		-cp "$RUNTIME_DIR/*" org.apache.kafka.connect.cli.ConnectStandalone \
		"$state/worker.properties" "$state/connector.properties"
}

count() {
	need TABLE --table
	local args=(count "$TABLE")
	[[ -z "$UNTIL" ]] || args+=(--until "$UNTIL" --timeout "$TIMEOUT" --interval "$POLL_INTERVAL")
	pyiceberg "${args[@]}"
}

status() {
	if [[ -f "$HOME_CACHE/.complete" ]]; then
		echo "connect: Kafka Connect $CONNECT_VERSION, Iceberg sink $ICEBERG_VERSION in $HOME_CACHE"
		return 0
	fi
	echo "connect: not installed ($HOME_CACHE)"
	return 3
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
prepare) parse_flags "$@"; install; prepare ;;
run) parse_flags "$@"; run ;;
count) parse_flags "$@"; count ;;
drop) parse_flags "$@"; need TABLE --table; pyiceberg drop "$TABLE" ;;
reset) parse_flags "$@"; need GROUP --group; log "deleting $STATE_ROOT/$GROUP"; rm -rf "${STATE_ROOT:?}/$GROUP" ;;
status) status ;;
classpath) install >&2; echo "$RUNTIME_DIR/*" ;;
*) echo "usage: $0 install|prepare|run|count|drop|reset|status|classpath (see the top of $0)" >&2; exit 2 ;;
esac
