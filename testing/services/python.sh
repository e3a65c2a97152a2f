#!/usr/bin/env bash
# The Python and Spark side of the e2e tier: a venv with pyiceberg and pyspark, and the extra
# jars Spark needs (Iceberg runtime, S3FileIO bundle, JDBC drivers, Kafka connector).
# No server: these are readers and writers that our tables must work with.
#
#   python.sh install          make the venv and fetch the jars (cached; once)
#   python.sh spark-jars       print the jars, comma-separated, for spark.jars (installs if needed)
#   python.sh python ARGS...   run the venv's python
#   python.sh env              print export lines: HAADE_PYTHON, PYSPARK_PYTHON, HAADE_SPARK_JARS
#   python.sh smoke [--postgres HOST:PORT] [--s3-endpoint URL] [--kafka HOST:PORT]
#                              Spark writes a row through JdbcCatalog `local` (SQLite) into
#                              lakehouse.smoke, reads it back, and pyiceberg reads it too
#   python.sh status           whether the venv and jars are installed
#   python.sh start|stop       no-ops that install / do nothing, so all.sh can treat it alike
set -euo pipefail
SERVICE=python
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PYICEBERG_VERSION=0.12.0
PYSPARK_VERSION=3.5.7 # the newest 3.5 whose spark-sql-kafka-0-10 Maven Central serves
ICEBERG_VERSION=1.10.1
SPARK_KAFKA_CLIENTS_VERSION=3.4.1 # what spark-sql-kafka-0-10 $PYSPARK_VERSION depends on
COMMONS_POOL2_VERSION=2.11.1
POSTGRESQL_JDBC_VERSION=42.7.10
SQLITE_JDBC_VERSION=3.51.1.0
PYTHON="${PYTHON:-python3}"

CONSTRAINTS="$SERVICES_DIR/python/constraints.txt"
PY_VER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
# The venv is keyed by the Python version, the pins and the constraints: change one, get a new one.
VENV_KEY="$({ printf '%s\n' "$PY_VER" "$PYICEBERG_VERSION" "$PYSPARK_VERSION"; cat "$CONSTRAINTS" 2>/dev/null || true; } | sha256sum | cut -c1-12)"
VENV="$HAADE_CACHE/python/venv-py$PY_VER-$VENV_KEY"
VPY="$VENV/bin/python"
JARS_KEY="spark$PYSPARK_VERSION-iceberg$ICEBERG_VERSION-kc$SPARK_KAFKA_CLIENTS_VERSION-pg$POSTGRESQL_JDBC_VERSION-sqlite$SQLITE_JDBC_VERSION"
JARS_DIR="$HAADE_CACHE/spark-jars/$JARS_KEY"
export PIP_CACHE_DIR="$HAADE_CACHE/pip"

make_venv() {
	[[ -f "$VENV/.complete" ]] && return 0
	log "creating venv $VENV (pyiceberg $PYICEBERG_VERSION, pyspark $PYSPARK_VERSION); pyspark is a 300 MB sdist, the first time takes a few minutes"
	rm -rf "$VENV"
	mkdir -p "$(dirname "$VENV")"
	"$PYTHON" -m venv "$VENV"
	local lf="$LOG_DIR/python-install.log" c=()
	[[ -f "$CONSTRAINTS" ]] && c=(-c "$CONSTRAINTS")
	if ! {
		"${NICE[@]}" "$VPY" -m pip install --disable-pip-version-check -q --upgrade pip wheel &&
			"${NICE[@]}" "$VPY" -m pip install --disable-pip-version-check "${c[@]}" \
				"pyiceberg[sql-sqlite,sql-postgres,pyarrow]==$PYICEBERG_VERSION" "pyspark==$PYSPARK_VERSION"
	} >"$lf" 2>&1; then
		tail_log "$lf" 60
		rm -rf "$VENV"
		die "pip install failed"
	fi
	"$VPY" -c 'import pyiceberg, pyspark, pyarrow, sqlalchemy' || { rm -rf "$VENV"; die "the new venv cannot import its packages"; }
	"$VPY" -m pip freeze --disable-pip-version-check >"$VENV/freeze.txt"
	touch "$VENV/.complete"
	log "venv ready: $VENV"
}

fetch_jars() {
	[[ -f "$JARS_DIR/.complete" ]] && return 0
	log "fetching Spark's extra jars with Maven into $JARS_DIR (once)"
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	rm -rf "$JARS_DIR"
	mkdir -p "$JARS_DIR"
	mvn_run "$LOG_DIR/spark-jars-fetch.log" -f "$SERVICES_DIR/spark/pom.xml" \
		-Dspark.version="$PYSPARK_VERSION" -Diceberg.version="$ICEBERG_VERSION" \
		-Dspark.kafka.clients.version="$SPARK_KAFKA_CLIENTS_VERSION" -Dcommons.pool2.version="$COMMONS_POOL2_VERSION" \
		-Dpostgresql.version="$POSTGRESQL_JDBC_VERSION" -Dsqlite.jdbc.version="$SQLITE_JDBC_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$JARS_DIR"
	ls "$JARS_DIR"/iceberg-spark-runtime-3.5_2.12-"$ICEBERG_VERSION".jar >/dev/null ||
		die "Maven did not bring iceberg-spark-runtime-3.5_2.12-$ICEBERG_VERSION.jar"
	touch "$JARS_DIR/.complete"
}

install() {
	with_lock "python-venv" make_venv
	with_lock "spark-jars" fetch_jars
}

jar_list() {
	local jars=("$JARS_DIR"/*.jar)
	local IFS=,
	echo "${jars[*]}"
}

java_home() {
	# Spark binds to what the host name resolves to unless told: keep it on the loopback.
	export SPARK_LOCAL_IP=127.0.0.1
	if [[ -z "${JAVA_HOME:-}" ]] && command -v java >/dev/null; then
		JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
		export JAVA_HOME
	fi
}

status() {
	local ok=0
	if [[ -f "$VENV/.complete" ]]; then echo "python: venv $VENV"; else echo "python: venv not installed ($VENV)"; ok=3; fi
	if [[ -f "$JARS_DIR/.complete" ]]; then echo "python: spark jars in $JARS_DIR"; else echo "python: spark jars not fetched ($JARS_DIR)"; ok=3; fi
	return $ok
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install | start) install ;;
stop) : ;;
status) status ;;
spark-jars) install >&2; jar_list ;;
python) install >&2; java_home; export PYSPARK_PYTHON="$VPY"; exec "$VPY" "$@" ;;
env)
	install >&2
	cat <<EOF
export HAADE_PYTHON=$VPY
export PYSPARK_PYTHON=$VPY
export SPARK_LOCAL_IP=127.0.0.1
export HAADE_SPARK_JARS=$(jar_list)
EOF
	;;
smoke)
	install
	java_home
	export PYSPARK_PYTHON="$VPY"
	if printf '%s\n' "$@" | grep -q -- '--s3-endpoint'; then
		: "${AWS_ACCESS_KEY_ID:=minioadmin}" "${AWS_SECRET_ACCESS_KEY:=minioadmin}" "${AWS_REGION:=us-east-1}"
		export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
	fi
	"${NICE[@]}" "$VPY" "$SERVICES_DIR/python/spark_smoke.py" --jars "$(jar_list)" "$@"
	;;
*) echo "usage: $0 install|spark-jars|python ARGS|env|smoke [--postgres HOST:PORT] [--s3-endpoint URL] [--kafka HOST:PORT]|status" >&2; exit 2 ;;
esac
