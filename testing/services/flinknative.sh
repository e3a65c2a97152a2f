#!/usr/bin/env bash
# Apache Iceberg's own Flink sink on the standalone Flink 1.19 cluster of flinkcluster.sh: the jars
# a Flink user adds for Flink SQL from Kafka into Iceberg, and Flink's SQL client to submit with.
# The side-by-side harness's native contender (testing/sidebyside/native.go) runs through it.
#
#   flinknative.sh install       fetch the jars with Maven into the cache (once); flinkcluster.sh
#                                install brings the Flink distribution the SQL client comes from
#   flinknative.sh classpath     print the cluster's extra class path (colon-separated), which
#                                `FLINKC_NATIVE_CLASSPATH=1 flinkcluster.sh start` puts on the
#                                JobManager's and the TaskManagers' class path
#   flinknative.sh sql-client [ARGS...]
#                                Flink's bin/sql-client.sh against the running cluster (its
#                                REST API, from the cluster's config.yaml), with the same jars on
#                                its class path; ends in exec, so the caller's child becomes the
#                                client's JVM. E.g. `flinknative.sh sql-client -f job.sql`, or no
#                                argument for the interactive client. Its log goes to
#                                $HAADE_RUN/flinkcluster/log
#   flinknative.sh status        whether the jars are installed
#
# The jars (flinknative/pom.xml, each self-contained): Iceberg's Flink runtime for Flink 1.19, the
# Kafka SQL connector, Iceberg's AWS bundle (S3FileIO for the MinIO warehouse), Hadoop's shaded
# client (the Iceberg catalog factory and Parquet need Hadoop's Configuration) and the PostgreSQL
# driver (Iceberg's JdbcCatalog). The Flink distribution from PyPI has no opt/flink-sql-gateway
# jar, which the SQL client's embedded mode runs: Maven brings it too, for the client only.
set -euo pipefail
SERVICE=flinknative
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FLINK_VERSION=1.19.0                       # the cluster's (flinkcluster.sh)
ICEBERG_VERSION=1.10.0                     # iceberg-flink-runtime-1.19: the newest Maven Central serves here (1.10.1 is not)
KAFKA_CONNECTOR_VERSION=3.2.0-1.19         # flink-sql-connector-kafka for Flink 1.19
HADOOP_VERSION=3.4.1                       # hadoop-client-api/-runtime, as connect.sh pins
POSTGRESQL_JDBC_VERSION=42.7.10            # as connect.sh pins
GATEWAY_VERSION=1.19.1                     # flink-sql-gateway: Maven Central serves no 1.19.0 here
JAVA="${JAVA:-java}"

KEY="iceberg$ICEBERG_VERSION-flink$FLINK_VERSION-kafka$KAFKA_CONNECTOR_VERSION-hadoop$HADOOP_VERSION-pg$POSTGRESQL_JDBC_VERSION-gw$GATEWAY_VERSION"
HOME_CACHE="$HAADE_CACHE/flinknative/$KEY"
LIB="$HOME_CACHE/lib"
DIST="$HAADE_CACHE/flink/dist-$FLINK_VERSION" # flinkcluster.sh's
CLUSTER_CONF="$HAADE_RUN/flinkcluster/conf"
CONF_DIR="$HAADE_RUN/flinknative/conf"

fetch() {
	[[ -f "$HOME_CACHE/.complete" ]] && return 0
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	log "fetching Iceberg $ICEBERG_VERSION's Flink runtime, the Kafka SQL connector $KAFKA_CONNECTOR_VERSION and their companions with Maven into $HOME_CACHE (once)"
	rm -rf "$HOME_CACHE"
	mkdir -p "$LIB"
	mvn_run "$LOG_DIR/flinknative-fetch.log" -f "$SERVICES_DIR/flinknative/pom.xml" \
		-Dflink.minor="${FLINK_VERSION%.*}" -Diceberg.version="$ICEBERG_VERSION" \
		-Dkafka.connector.version="$KAFKA_CONNECTOR_VERSION" -Dhadoop.version="$HADOOP_VERSION" \
		-Dpostgresql.version="$POSTGRESQL_JDBC_VERSION" -Dgateway.version="$GATEWAY_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIB"
	ls "$LIB/iceberg-flink-runtime-${FLINK_VERSION%.*}-$ICEBERG_VERSION.jar" "$LIB/flink-sql-connector-kafka-$KAFKA_CONNECTOR_VERSION.jar" \
		"$LIB/flink-sql-gateway-$GATEWAY_VERSION.jar" >/dev/null || die "Maven did not bring every jar of flinknative/pom.xml"
	touch "$HOME_CACHE/.complete"
	log "installed: $(find "$LIB" -name '*.jar' | wc -l) jars ($(du -sh "$HOME_CACHE" | cut -f1))"
}

install() {
	with_lock "flinknative-$KEY" fetch
}

# cluster_classpath: every jar but the SQL gateway's, which only the client runs.
cluster_classpath() {
	[[ -f "$HOME_CACHE/.complete" ]] || die "not installed: run $0 install"
	local cp="" j
	for j in "$LIB"/*.jar; do
		case "$(basename "$j")" in flink-sql-gateway-*) continue ;; esac
		cp="$cp:$j"
	done
	echo "${cp#:}"
}

sql_client() {
	install
	[[ -f "$DIST/.complete" ]] || die "Flink $FLINK_VERSION is not installed: run flinkcluster.sh install"
	[[ -f "$CLUSTER_CONF/config.yaml" ]] || die "no $CLUSTER_CONF/config.yaml: start the cluster first (FLINKC_NATIVE_CLASSPATH=1 flinkcluster.sh start)"
	# The cluster's configuration (its REST address is where the client submits; its defaults are
	# the job's, which a script's SET overrides), and the log4j file bin/sql-client.sh names.
	mkdir -p "$CONF_DIR"
	cp "$CLUSTER_CONF/config.yaml" "$CONF_DIR/config.yaml"
	# The embedded gateway's REST endpoint (a free port) binds loopback, like every listener here.
	printf '%s\n' "sql-gateway.endpoint.rest.bind-address: 127.0.0.1" >>"$CONF_DIR/config.yaml"
	cp "$DIST/conf/log4j-cli.properties" "$CONF_DIR/"
	local cp
	cp="$(cluster_classpath)"
	if ! ls "$DIST"/opt/flink-sql-gateway-*.jar >/dev/null 2>&1; then
		cp="$cp:$LIB/flink-sql-gateway-$GATEWAY_VERSION.jar"
	fi
	# bin/sql-client.sh puts HADOOP_CLASSPATH on the client's class path, as the cluster's
	# scripts do on theirs, and execs java.
	exec env FLINK_CONF_DIR="$CONF_DIR" FLINK_LOG_DIR="$HAADE_RUN/flinkcluster/log" FLINK_HOME="$DIST" \
		HADOOP_CLASSPATH="$cp" \
		JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v "$JAVA")")")")}" \
		"$DIST/bin/sql-client.sh" "$@"
}

status() {
	if [[ -f "$HOME_CACHE/.complete" ]]; then
		echo "flinknative: Iceberg $ICEBERG_VERSION's Flink runtime and the Kafka SQL connector $KAFKA_CONNECTOR_VERSION in $HOME_CACHE"
		return 0
	fi
	echo "flinknative: not installed ($HOME_CACHE)"
	return 3
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
classpath) cluster_classpath ;;
sql-client) sql_client "$@" ;;
status) status ;;
*) echo "usage: $0 install|classpath|sql-client [ARGS...]|status (see the top of $0)" >&2; exit 2 ;;
esac
