#!/usr/bin/env bash
# Apache Iceberg's REST catalog test server (the code behind the apache/iceberg-rest-fixture
# image: RESTServerCatalogAdapter from org.apache.iceberg:iceberg-open-api's test-fixtures jar,
# RESTCatalogServlet from iceberg-core's tests jar), with a JdbcCatalog on its own SQLite file as
# the backend and the MinIO warehouse s3://warehouse/ through S3FileIO.
#
#   rest.sh install    fetch the jars with Maven and compile the launcher into the cache (once)
#   rest.sh start      install if needed, start, wait until GET /v1/config answers
#   rest.sh stop       stop it; the catalog database stays
#   rest.sh restart    stop, then start, keeping the catalog
#   rest.sh status     exit 0 when running and answering, 3 when stopped
#   rest.sh env        export lines: HAADE_REST_URI
#   rest.sh reset      stop and delete the catalog database (the table files in MinIO stay)
#
# Listens on http://127.0.0.1:8181 only (HAADE_REST_PORT changes the port). RESTCatalogServer
# itself binds every interface and has no option for the address, so rest/src holds a small
# launcher, LoopbackRESTCatalogServer, that serves the same adapter and servlet from a Jetty
# connector bound to 127.0.0.1. No authentication. The server's S3 settings come from the
# pins below and its credentials from AWS_* (default minioadmin/minioadmin, us-east-1); any
# other CATALOG_* variable in the environment becomes a catalog property, as in the fixture
# (CATALOG_FOO__BAR_BAZ -> foo-bar.baz).
set -euo pipefail
SERVICE=rest
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ICEBERG_VERSION="${ICEBERG_REST_VERSION:-1.10.1}" # as python.sh pins for Spark and pyiceberg's peers
JETTY_VERSION=11.0.25                             # the Jetty 11 the 1.10 fixture is compiled against
SQLITE_JDBC_VERSION=3.51.1.0                      # as python.sh
SLF4J_VERSION=2.0.17
REST_HOST=127.0.0.1
REST_PORT="${HAADE_REST_PORT:-8181}"
REST_WAREHOUSE="${HAADE_REST_WAREHOUSE:-s3://warehouse/}"
REST_S3_ENDPOINT="${HAADE_REST_S3_ENDPOINT:-http://127.0.0.1:9000}"
REST_HEAP="${REST_HEAP:--Xmx384m -Xms64m}"
START_TIMEOUT="${REST_START_TIMEOUT:-90}"

KEY="iceberg$ICEBERG_VERSION-jetty$JETTY_VERSION-sqlite$SQLITE_JDBC_VERSION-slf4j$SLF4J_VERSION"
LIBS="$HAADE_CACHE/rest/$KEY/libs"
LAUNCHER_SRC="$SERVICES_DIR/rest/src/org/apache/iceberg/rest/LoopbackRESTCatalogServer.java"
# The compiled launcher is keyed by its source, so an edit recompiles it.
CLASSES="$HAADE_CACHE/rest/$KEY/classes-$(sha256sum "$LAUNCHER_SRC" | cut -c1-12)"
MAIN=org.apache.iceberg.rest.LoopbackRESTCatalogServer
HOME_DIR="$HAADE_RUN/rest"
DB="$HOME_DIR/catalog.db"
URI="http://$REST_HOST:$REST_PORT"
JAVA="${JAVA:-java}"

fetch_jars() {
	[[ -f "$LIBS/.complete" ]] && return 0
	log "fetching the Iceberg $ICEBERG_VERSION REST fixture's jars with Maven into $LIBS (once)"
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	rm -rf "$LIBS"
	mkdir -p "$LIBS"
	mvn_run "$LOG_DIR/rest-fetch.log" -f "$SERVICES_DIR/rest/pom.xml" \
		-Diceberg.version="$ICEBERG_VERSION" -Djetty.version="$JETTY_VERSION" \
		-Dsqlite.jdbc.version="$SQLITE_JDBC_VERSION" -Dslf4j.version="$SLF4J_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS"
	ls "$LIBS/iceberg-open-api-$ICEBERG_VERSION-test-fixtures.jar" "$LIBS/iceberg-core-$ICEBERG_VERSION-tests.jar" >/dev/null ||
		die "Maven did not bring the iceberg-open-api test-fixtures and iceberg-core tests jars"
	touch "$LIBS/.complete"
}

compile_launcher() {
	[[ -f "$CLASSES/.complete" ]] && return 0
	command -v javac >/dev/null || die "javac is not installed (a JDK 17+ is needed, not only a JRE)"
	log "compiling the launcher into $CLASSES"
	rm -rf "$CLASSES"
	mkdir -p "$CLASSES"
	"${NICE[@]}" javac -nowarn -d "$CLASSES" -cp "$LIBS/*" "$LAUNCHER_SRC" >"$LOG_DIR/rest-javac.log" 2>&1 || {
		tail_log "$LOG_DIR/rest-javac.log" 40
		rm -rf "$CLASSES"
		die "javac failed on $LAUNCHER_SRC"
	}
	touch "$CLASSES/.complete"
}

install() {
	"$JAVA" -version >/dev/null 2>&1 || die "no java on PATH (the REST fixture needs Java 17+)"
	with_lock "rest-$KEY" fetch_jars
	with_lock "rest-$KEY" compile_launcher
}

# ready: the catalog answers GET /v1/config.
ready() { curl -fsS --max-time 5 "$URI/v1/config" >/dev/null; }

start() {
	install
	if is_running rest; then
		wait_until rest "$START_TIMEOUT" "GET $URI/v1/config" ready
		log "already running (pid $(pid_of rest)) at $URI"
		return 0
	fi
	ensure_port_free rest "$REST_HOST" "$REST_PORT"
	mkdir -p "$HOME_DIR"
	log "starting the Iceberg $ICEBERG_VERSION REST catalog on $URI (catalog $DB, warehouse $REST_WAREHOUSE on $REST_S3_ENDPOINT)"
	# The fixture reads its catalog properties from CATALOG_* variables (RCKUtils); exported here,
	# not put on the command line, so that the log's start line shows no credentials.
	export REST_HOST REST_PORT
	export CATALOG_URI="jdbc:sqlite:$DB?journal_mode=WAL&busy_timeout=10000"
	# One connection: with SQLite in WAL mode, two pooled connections committing at once fail with
	# SQLITE_BUSY_SNAPSHOT, and after an outage two committers retrying together kept failing.
	export CATALOG_CLIENTS=1
	export CATALOG_JDBC_SCHEMA__VERSION=V1 # the JdbcCatalog layout iceberg-go's SQL catalog uses too
	export CATALOG_WAREHOUSE="$REST_WAREHOUSE"
	export CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO
	export CATALOG_S3_ENDPOINT="$REST_S3_ENDPOINT"
	export CATALOG_S3_PATH__STYLE__ACCESS=true
	export AWS_REGION="${AWS_REGION:-us-east-1}"
	export CATALOG_CLIENT_REGION="$AWS_REGION"
	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-minioadmin}"
	export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-minioadmin}"
	# shellcheck disable=SC2086 # REST_HEAP holds several options
	spawn rest "$JAVA" $REST_HEAP -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
		-Dorg.slf4j.simpleLogger.showDateTime=true "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS" \
		-cp "$CLASSES:$LIBS/*" "$MAIN"
	wait_for_port rest "$REST_HOST" "$REST_PORT" "$START_TIMEOUT"
	wait_until rest "$START_TIMEOUT" "GET $URI/v1/config" ready
	log "ready at $URI (pid $(pid_of rest))"
}

stop() { stop_pid rest 30; }

status() {
	if is_running rest && ready 2>/dev/null; then
		echo "rest: running (pid $(pid_of rest)) at $URI, catalog $DB"
		return 0
	elif is_running rest; then
		echo "rest: process $(pid_of rest) alive but $URI does not answer"
		return 1
	fi
	echo "rest: stopped"
	return 3
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock rest-service start ;;
stop) with_lock rest-service stop ;;
restart) with_lock rest-service stop; with_lock rest-service start ;;
status) status ;;
env) echo "export HAADE_REST_URI=$URI" ;;
reset) with_lock rest-service stop; log "deleting $HOME_DIR"; rm -rf "$HOME_DIR" ;;
*) echo "usage: $0 install|start|stop|restart|status|env|reset" >&2; exit 2 ;;
esac
