#!/usr/bin/env bash
# Trino over the lakehouse: a single-node coordinator (it also runs the work) with three Iceberg
# catalogs that read the tables HAADE writes.
#
#   trino.sh install   fetch Trino, its Iceberg plugin, the CLI and the SQLite driver from Maven
#                      Central with Maven into the cache, unpack them (once)
#   trino.sh start     install if needed, write the configuration under $HAADE_RUN/trino, start,
#                      wait until GET /v1/info says "starting":false
#   trino.sh stop      stop it
#   trino.sh restart   stop, then start
#   trino.sh status    exit 0 when running and answering, 3 when stopped
#   trino.sh env       export lines: HAADE_TRINO_URL, HAADE_TRINO_CLI
#   trino.sh cli ARGS  the Trino CLI, pointed at this server (e.g. cli --execute 'SHOW CATALOGS')
#   trino.sh catalogs  print the catalog properties files it writes (credentials as ${ENV:...})
#
# The catalogs (each reads lakehouse.*, the namespace the pipelines write):
#   iceberg  the SQL catalog "local" on the scripts' PostgreSQL (postgres.sh), files on MinIO
#            (minio.sh) through Trino's native S3, path-style
#   rest     the Iceberg REST catalog (rest.sh) with the same MinIO
#   demo     the embedded demo's SQLite catalog and local warehouse: $HAADE_TRINO_DEMO_DIR
#            (default ./lakehouse of the repository), what `go run ./pipelines/bronze` writes
#
# Trino's JDBC catalog never creates the catalog's tables (iceberg_tables,
# iceberg_namespace_properties): until a pipeline has committed once into that database, every
# query on the catalog fails with `relation "iceberg_tables" does not exist` (PostgreSQL) or
# `no such table: iceberg_tables` (SQLite). `start` says so when it sees them missing.
#
# Listens on http://127.0.0.1:${HAADE_TRINO_PORT:-8080} only (node.bind-ip). Runs on the
# Temurin 25 JDK (Trino 476 refuses Java below 22):
# TRINO_JAVA_HOME changes it. Heap TRINO_HEAP (default 1G).
set -euo pipefail
SERVICE=trino
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TRINO_VERSION=476 # the newest release Maven Central serves here
SQLITE_JDBC_VERSION=3.51.1.0 # as python.sh and rest.sh
TRINO_JAVA_HOME="${TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
TRINO_HOST=127.0.0.1
TRINO_PORT="${HAADE_TRINO_PORT:-8080}"
TRINO_HEAP="${TRINO_HEAP:-1G}"
START_TIMEOUT="${TRINO_START_TIMEOUT:-120}"
PG_PORT="${HAADE_PG_PORT:-5432}"
REST_PORT="${HAADE_REST_PORT:-8181}"
S3_ENDPOINT="${HAADE_TRINO_S3_ENDPOINT:-http://127.0.0.1:9000}"
WAREHOUSE="${HAADE_TRINO_WAREHOUSE:-s3://warehouse/}"
DEMO_DIR="${HAADE_TRINO_DEMO_DIR:-$REPO_ROOT/lakehouse}"

KEY="trino$TRINO_VERSION-sqlite$SQLITE_JDBC_VERSION"
DIST="$HAADE_CACHE/trino/$KEY"
SERVER="$DIST/trino-server-core-$TRINO_VERSION"
CLI_JAR="$DIST/trino-cli-$TRINO_VERSION-executable.jar"
HOME_DIR="$HAADE_RUN/trino"
ETC="$HOME_DIR/etc"
URL="http://$TRINO_HOST:$TRINO_PORT"
JAVA="$TRINO_JAVA_HOME/bin/java"

# mvn_copy ARTIFACT: one artifact from Maven Central into $DIST/dl (through the cache's m2).
mvn_copy() {
	mvn_run "$LOG_DIR/trino-fetch.log" -f "$SERVICES_DIR/trino/pom.xml" dependency:copy \
		-Dartifact="$1" -DoutputDirectory="$DIST/dl" -Dmdep.overWriteIfNewer=false
}

fetch() {
	[[ -f "$DIST/.complete" ]] && return 0
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	command -v unzip >/dev/null || die "unzip is not installed (apt-get install -y unzip)"
	log "fetching Trino $TRINO_VERSION (server, Iceberg plugin, CLI: about 560 MB) with Maven into $DIST (once)"
	rm -rf "$DIST"
	mkdir -p "$DIST/dl"
	mvn_copy "io.trino:trino-server-core:$TRINO_VERSION:tar.gz"
	mvn_copy "io.trino:trino-iceberg:$TRINO_VERSION:zip"
	mvn_copy "io.trino:trino-cli:$TRINO_VERSION:jar:executable"
	mvn_copy "org.xerial:sqlite-jdbc:$SQLITE_JDBC_VERSION"
	log "unpacking"
	"${NICE[@]}" tar -C "$DIST" -xzf "$DIST/dl/trino-server-core-$TRINO_VERSION.tar.gz"
	[[ -d "$SERVER/lib" ]] || die "the tarball did not unpack into $SERVER"
	rm -rf "$SERVER/plugin/iceberg" "$DIST/iceberg-unzip"
	"${NICE[@]}" unzip -q "$DIST/dl/trino-iceberg-$TRINO_VERSION.zip" -d "$DIST/iceberg-unzip"
	mv "$DIST/iceberg-unzip/trino-iceberg-$TRINO_VERSION" "$SERVER/plugin/iceberg"
	rmdir "$DIST/iceberg-unzip"
	# The Iceberg plugin bundles PostgreSQL's driver, not SQLite's (for the demo catalog).
	cp "$DIST/dl/sqlite-jdbc-$SQLITE_JDBC_VERSION.jar" "$SERVER/plugin/iceberg/"
	mv "$DIST/dl/trino-cli-$TRINO_VERSION-executable.jar" "$CLI_JAR"
	rm -rf "$DIST/dl"
	touch "$DIST/.complete"
	log "installed Trino $TRINO_VERSION in $SERVER ($(du -sh "$DIST" | cut -f1))"
}

install() {
	[[ -x "$JAVA" ]] || die "no Java at $JAVA: Trino $TRINO_VERSION needs Java 22+ (set TRINO_JAVA_HOME)"
	with_lock "trino-$KEY" fetch
}

# s3_props: native S3 on MinIO; the credentials are read from the server's environment at start.
s3_props() {
	cat <<EOF
fs.native-s3.enabled=true
s3.endpoint=$S3_ENDPOINT
s3.region=\${ENV:AWS_REGION}
s3.path-style-access=true
s3.aws-access-key=\${ENV:AWS_ACCESS_KEY_ID}
s3.aws-secret-key=\${ENV:AWS_SECRET_ACCESS_KEY}
EOF
}

catalog_iceberg() {
	cat <<EOF
# The SQL catalog "local" that bronze, silver and gold write with --catalog-uri=postgres://...
connector.name=iceberg
iceberg.catalog.type=jdbc
iceberg.jdbc-catalog.catalog-name=local
iceberg.jdbc-catalog.driver-class=org.postgresql.Driver
iceberg.jdbc-catalog.connection-url=jdbc:postgresql://127.0.0.1:$PG_PORT/lakehouse
iceberg.jdbc-catalog.connection-user=\${ENV:HAADE_TRINO_PG_USER}
iceberg.jdbc-catalog.connection-password=\${ENV:HAADE_TRINO_PG_PASSWORD}
iceberg.jdbc-catalog.default-warehouse-dir=$WAREHOUSE
$(s3_props)
EOF
}

catalog_rest() {
	cat <<EOF
# The Iceberg REST catalog of rest.sh (--catalog=rest --catalog-uri=http://127.0.0.1:$REST_PORT)
connector.name=iceberg
iceberg.catalog.type=rest
iceberg.rest-catalog.uri=http://127.0.0.1:$REST_PORT
$(s3_props)
EOF
}

catalog_demo() {
	cat <<EOF
# The embedded demo's SQLite catalog "local" and its local warehouse (file:// paths)
connector.name=iceberg
iceberg.catalog.type=jdbc
iceberg.jdbc-catalog.catalog-name=local
iceberg.jdbc-catalog.driver-class=org.sqlite.JDBC
iceberg.jdbc-catalog.connection-url=jdbc:sqlite:$DEMO_DIR/catalog.db
iceberg.jdbc-catalog.default-warehouse-dir=file://$DEMO_DIR/warehouse
fs.native-local.enabled=true
local.location=/
EOF
}

write_config() {
	mkdir -p "$ETC/catalog" "$HOME_DIR/data"
	# bin/launcher would pass node.properties as -D options; one file does the same here.
	cat >"$ETC/config.properties" <<EOF
node.environment=haade
node.id=haade-trino-local
node.bind-ip=$TRINO_HOST
node.internal-address=$TRINO_HOST
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$TRINO_PORT
discovery.uri=$URL
query.max-memory=512MB
query.max-memory-per-node=384MB
catalog.management=static
# Its request log, by default var/log/ under the working directory, goes with the other logs.
http-server.log.path=$LOG_DIR/trino-http-request.log
catalog.config-dir=$ETC/catalog
plugin.dir=$SERVER/plugin
EOF
	cat >"$ETC/log.properties" <<EOF
io.trino=INFO
org.apache.iceberg=WARN
EOF
	catalog_iceberg >"$ETC/catalog/iceberg.properties"
	catalog_rest >"$ETC/catalog/rest.properties"
	catalog_demo >"$ETC/catalog/demo.properties"
}

# ready: the coordinator has finished starting.
ready() { curl -fsS --max-time 5 "$URL/v1/info" | grep -q '"starting":false'; }

# check_catalog_tables: Trino's JDBC catalog expects the tables a first commit creates.
check_catalog_tables() {
	local n
	if ! n="$(PGPASSWORD=haade psql -X -q -A -t -h 127.0.0.1 -p "$PG_PORT" -U haade -d lakehouse \
		-c "SELECT count(*) FROM information_schema.tables WHERE table_name = 'iceberg_tables'" 2>/dev/null)"; then
		log "NOTE: PostgreSQL on 127.0.0.1:$PG_PORT does not answer (postgres.sh start): catalog 'iceberg' fails until it does"
		return 0
	fi
	if [[ "$n" != 1 ]]; then
		log "NOTE: PostgreSQL has no iceberg_tables yet, and Trino never creates it: until bronze (or silver, gold) has committed once, catalog 'iceberg' fails with relation \"iceberg_tables\" does not exist"
	fi
	if [[ ! -f "$DEMO_DIR/catalog.db" ]]; then
		log "NOTE: no demo catalog at $DEMO_DIR/catalog.db (go run ./pipelines/bronze --runner=direct writes it): catalog 'demo' fails until then"
	fi
}

start() {
	install
	if is_running trino; then
		wait_until trino "$START_TIMEOUT" "GET $URL/v1/info shows \"starting\":false" ready
		log "already running (pid $(pid_of trino)) at $URL"
		return 0
	fi
	ensure_port_free trino "$TRINO_HOST" "$TRINO_PORT"
	write_config
	log "starting Trino $TRINO_VERSION on $URL (catalogs iceberg: PostgreSQL :$PG_PORT + $S3_ENDPOINT, rest: :$REST_PORT, demo: $DEMO_DIR)"
	export AWS_REGION="${AWS_REGION:-us-east-1}"
	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-minioadmin}"
	export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-minioadmin}"
	export HAADE_TRINO_PG_USER="${HAADE_TRINO_PG_USER:-haade}"
	export HAADE_TRINO_PG_PASSWORD="${HAADE_TRINO_PG_PASSWORD:-haade}"
	# What bin/launcher would run, without its Python: the JVM options of Trino's own jvm.config.
	cd "$HOME_DIR"
	spawn trino env TZ=UTC "$JAVA" -server "-Xmx$TRINO_HEAP" -XX:InitialRAMPercentage=10 \
		-XX:+UseG1GC -XX:G1HeapRegionSize=32M -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
		-XX:-OmitStackTraceInFastThrow -XX:ReservedCodeCacheSize=256M -XX:PerMethodRecompilationCutoff=10000 \
		-XX:PerBytecodeRecompilationCutoff=10000 -Djdk.attach.allowAttachSelf=true -Djdk.nio.maxCachedBufferSize=2000000 \
		-Dfile.encoding=UTF-8 -XX:+EnableDynamicAgentLoading --enable-native-access=ALL-UNNAMED \
		-Duser.timezone=UTC -Dnode.data-dir="$HOME_DIR/data" \
		-Dconfig="$ETC/config.properties" -Dlog.levels-file="$ETC/log.properties" \
		-cp "$SERVER/lib/*" io.trino.server.TrinoServer
	wait_for_port trino "$TRINO_HOST" "$TRINO_PORT" "$START_TIMEOUT"
	wait_until trino "$START_TIMEOUT" "GET $URL/v1/info shows \"starting\":false" ready
	log "ready at $URL (pid $(pid_of trino))"
	check_catalog_tables
}

stop() { stop_pid trino 30; }

status() {
	if is_running trino && ready 2>/dev/null; then
		echo "trino: running (pid $(pid_of trino)) at $URL"
		return 0
	elif is_running trino; then
		echo "trino: process $(pid_of trino) alive but $URL/v1/info does not say \"starting\":false"
		return 1
	fi
	echo "trino: stopped"
	return 3
}

cli() {
	[[ -f "$CLI_JAR" ]] || die "the CLI is not installed: trino.sh install"
	exec "$JAVA" -jar "$CLI_JAR" --server "$URL" --user haade "$@"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock trino-service start ;;
stop) with_lock trino-service stop ;;
restart) with_lock trino-service stop; with_lock trino-service start ;;
status) status ;;
env) printf 'export HAADE_TRINO_URL=%s\nexport HAADE_TRINO_CLI=%q\n' "$URL" "$CLI_JAR" ;;
cli) cli "$@" ;;
catalogs) for c in iceberg rest demo; do echo "## etc/catalog/$c.properties"; "catalog_$c"; echo; done ;;
*) echo "usage: $0 install|start|stop|restart|status|env|cli ARGS|catalogs" >&2; exit 2 ;;
esac
