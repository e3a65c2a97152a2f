#!/usr/bin/env bash
# PostgreSQL for the end-to-end tier (the SQL catalog on a server), from Debian's packages.
#
#   postgres.sh install   apt-get install the server if it is missing
#   postgres.sh start     initdb a private cluster under $HAADE_RUN on first start, start it on
#                         127.0.0.1:${HAADE_PG_PORT:-5432}, wait until it answers, and make
#                         role haade (password haade) and database lakehouse
#   postgres.sh stop      stop it (fast shutdown); the data dir stays
#   postgres.sh restart   stop, then start
#   postgres.sh status    exit 0 when running and answering, 3 when stopped
#   postgres.sh env       print export lines: HAADE_PG_PORT, HAADE_PG_URL, HAADE_PG_JDBC
#   postgres.sh bronze-env  print HAADE_PG_BRONZE_URL: the least-privilege catalog role below
#   postgres.sh psql ARGS run psql as haade on database lakehouse
#   postgres.sh reset     stop and delete the cluster
#
# `start` also makes a least-privilege role for bronze: haade_bronze (password
# haade-catalog-secret), no superuser, no CREATEDB or CREATEROLE, that may connect only to the
# database lakehouse_bronze (owned by postgres; PUBLIC may no longer connect to lakehouse either).
# There it has nothing on schema public, USAGE and CREATE on the schema haade_bronze (owned by
# postgres; first on the role's default search_path "$user", public), and owns the catalog's two
# tables in it, made in Iceberg JdbcCatalog's layout (V1): iceberg_tables and
# iceberg_namespace_properties. (The SQL catalog runs CREATE TABLE IF NOT EXISTS at open, which
# PostgreSQL refuses without CREATE on the schema even when the table exists.)
#
# It runs its own cluster, never Debian's default one (/etc/postgresql/...). If something else
# already holds the port, start says so; pick another with HAADE_PG_PORT=5433.
set -euo pipefail
SERVICE=postgres
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_MAJOR="${PG_MAJOR:-15}" # Debian 12's PostgreSQL
PG_HOST=127.0.0.1
PG_PORT="${HAADE_PG_PORT:-5432}"
PG_USER=haade
PG_PASSWORD=haade
PG_DB=lakehouse
START_TIMEOUT="${PG_START_TIMEOUT:-60}"
BRONZE_ROLE=haade_bronze
BRONZE_PASSWORD="${HAADE_PG_BRONZE_PASSWORD:-haade-catalog-secret}"
BRONZE_DB=lakehouse_bronze

PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_HOME="$HAADE_RUN/postgres"
DATA_DIR="$PG_HOME/data"
SOCK_DIR="$PG_HOME/sock"
PG_LOG="$(log_file postgres)"
URL="postgres://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB?sslmode=disable"
JDBC="jdbc:postgresql://$PG_HOST:$PG_PORT/$PG_DB?user=$PG_USER&password=$PG_PASSWORD"
BRONZE_URL="postgres://$BRONZE_ROLE:$BRONZE_PASSWORD@$PG_HOST:$PG_PORT/$BRONZE_DB?sslmode=disable"

# as_pg CMD...: PostgreSQL refuses to run as root, so root runs it as the postgres user.
as_pg() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

install() {
	[[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_ctl" ]] && return 0
	((EUID == 0)) || die "PostgreSQL $PG_MAJOR is not installed, and only root can apt-get install postgresql-$PG_MAJOR"
	log "installing postgresql-$PG_MAJOR from Debian's packages"
	local lf="$LOG_DIR/postgres-install.log"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "postgresql-$PG_MAJOR" >"$lf" 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get update >>"$lf" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "postgresql-$PG_MAJOR" >>"$lf" 2>&1 ||
			{ tail_log "$lf"; die "apt-get install postgresql-$PG_MAJOR failed"; }
	fi
	[[ -x "$PG_BIN/initdb" ]] || die "postgresql-$PG_MAJOR installed, but $PG_BIN/initdb is missing"
	# Debian's package makes a default cluster and, where init scripts may run, starts it on
	# 5432. That one was started by our own install just now: stop it, it is not ours to use.
	if command -v pg_ctlcluster >/dev/null && pg_lsclusters -h 2>/dev/null | awk -v v="$PG_MAJOR" '$1==v && $2=="main" && $4=="online"' | grep -q .; then
		log "stopping Debian's default cluster $PG_MAJOR/main that the install started"
		pg_ctlcluster "$PG_MAJOR" main stop || true
	fi
}

prepare_dirs() {
	mkdir -p "$PG_HOME" "$SOCK_DIR"
	if ((EUID == 0)); then
		chown postgres:postgres "$PG_HOME" "$SOCK_DIR"
		# The log lives in the shared log dir, written by the postgres user.
		touch "$PG_LOG"
		chown postgres:postgres "$PG_LOG"
		as_pg test -x "$PG_HOME" || die "the postgres user cannot reach $PG_HOME: use a HAADE_RUN that it can traverse"
	fi
	chmod 700 "$PG_HOME"
}

init_cluster() {
	[[ -f "$DATA_DIR/PG_VERSION" ]] && return 0
	log "initdb of a new cluster in $DATA_DIR"
	# The superuser has no password: it is reached only through the private socket (trust).
	as_pg "$PG_BIN/initdb" -D "$DATA_DIR" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=scram-sha-256 >>"$PG_LOG" 2>&1 ||
		fail_with_log "$PG_LOG" "initdb failed"
	# Only the loopback address, no IPv6, private socket; tuned for tests, not for durability
	# of the host (a kill -9 of the server still keeps committed data).
	cat >>"$DATA_DIR/postgresql.conf" <<EOF

# testing/services/postgres.sh
listen_addresses = '$PG_HOST'
port = $PG_PORT
unix_socket_directories = '$SOCK_DIR'
max_connections = 100
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_min_messages = warning
EOF
}

pg_ready() { "$PG_BIN/pg_isready" -q -h "$PG_HOST" -p "$PG_PORT" -d postgres; }

# The postmaster's pid, from its own pid file, mirrored into ours for status and stop.
postmaster_pid() {
	[[ -f "$DATA_DIR/postmaster.pid" ]] || return 1
	local pid
	pid="$(head -n1 "$DATA_DIR/postmaster.pid")"
	[[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

superuser_sql() {
	as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK_DIR" -p "$PG_PORT" -U postgres -d postgres
}

make_role_and_db() {
	superuser_sql <<EOF >>"$PG_LOG" 2>&1 || fail_with_log "$PG_LOG" "creating role $PG_USER and database $PG_DB failed"
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END
\$\$;
SELECT 'CREATE DATABASE $PG_DB OWNER $PG_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB')
\gexec
EOF
}

# make_bronze_role: the least-privilege catalog role and its database, idempotent.
make_bronze_role() {
	superuser_sql <<EOF >>"$PG_LOG" 2>&1 || fail_with_log "$PG_LOG" "creating role $BRONZE_ROLE and database $BRONZE_DB failed"
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$BRONZE_ROLE') THEN
    CREATE ROLE $BRONZE_ROLE LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$BRONZE_PASSWORD';
  ELSE
    ALTER ROLE $BRONZE_ROLE LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$BRONZE_PASSWORD';
  END IF;
END
\$\$;
SELECT 'CREATE DATABASE $BRONZE_DB OWNER postgres' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$BRONZE_DB')
\gexec
REVOKE ALL ON DATABASE $BRONZE_DB FROM PUBLIC;
GRANT CONNECT ON DATABASE $BRONZE_DB TO $BRONZE_ROLE;
REVOKE CONNECT, TEMPORARY ON DATABASE $PG_DB FROM PUBLIC;
\connect $BRONZE_DB
REVOKE ALL ON SCHEMA public FROM PUBLIC;
CREATE SCHEMA IF NOT EXISTS $BRONZE_ROLE AUTHORIZATION postgres;
GRANT USAGE, CREATE ON SCHEMA $BRONZE_ROLE TO $BRONZE_ROLE;
SET search_path = $BRONZE_ROLE;
CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255) NOT NULL,
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key)
);
ALTER TABLE iceberg_tables OWNER TO $BRONZE_ROLE;
ALTER TABLE iceberg_namespace_properties OWNER TO $BRONZE_ROLE;
EOF
}

haade_query() {
	PGPASSWORD="$PG_PASSWORD" psql -X -q -A -t -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -c "$1"
}

start() {
	install
	prepare_dirs
	local pid
	if pid="$(postmaster_pid)"; then
		echo "$pid" >"$(pid_file postgres)"
		wait_until postgres "$START_TIMEOUT" "pg_isready on $PG_HOST:$PG_PORT" pg_ready
		make_role_and_db
		make_bronze_role
		log "already running (pid $pid) at $PG_HOST:$PG_PORT"
		return 0
	fi
	ensure_port_free postgres "$PG_HOST" "$PG_PORT"
	init_cluster
	log "starting PostgreSQL $PG_MAJOR on $PG_HOST:$PG_PORT, data in $DATA_DIR"
	# -c port overrides postgresql.conf, so HAADE_PG_PORT can change between runs.
	if ! as_pg "$PG_BIN/pg_ctl" -D "$DATA_DIR" -l "$PG_LOG" -w -t "$START_TIMEOUT" \
		-o "-c port=$PG_PORT -c listen_addresses=$PG_HOST" start >/dev/null 9>&-; then
		fail_with_log "$PG_LOG" "pg_ctl start failed"
	fi
	postmaster_pid >"$(pid_file postgres)" || fail_with_log "$PG_LOG" "PostgreSQL started but has no postmaster.pid"
	wait_until postgres "$START_TIMEOUT" "pg_isready on $PG_HOST:$PG_PORT" pg_ready
	make_role_and_db
	make_bronze_role
	wait_until postgres 30 "a query as $PG_USER on $PG_DB" haade_query "SELECT 1"
	log "ready at $PG_HOST:$PG_PORT (pid $(pid_of postgres)); $URL"
}

stop() {
	if ! postmaster_pid >/dev/null; then
		rm -f "$(pid_file postgres)"
		log "postgres is not running"
		return 0
	fi
	log "stopping postgres"
	as_pg "$PG_BIN/pg_ctl" -D "$DATA_DIR" -m fast -w -t 60 stop >/dev/null ||
		fail_with_log "$PG_LOG" "pg_ctl stop failed"
	rm -f "$(pid_file postgres)"
	log "postgres stopped"
}

status() {
	local pid
	if pid="$(postmaster_pid)" && pg_ready; then
		echo "postgres: running (pid $pid) at $PG_HOST:$PG_PORT, data in $DATA_DIR; $URL"
		return 0
	elif [[ -n "${pid:-}" ]]; then
		echo "postgres: postmaster $pid alive but $PG_HOST:$PG_PORT does not answer"
		return 1
	fi
	echo "postgres: stopped"
	return 3
}

print_env() {
	cat <<EOF
export HAADE_PG_PORT=$PG_PORT
export HAADE_PG_URL='$URL'
export HAADE_PG_JDBC='$JDBC'
EOF
}

print_bronze_env() {
	echo "export HAADE_PG_BRONZE_URL='$BRONZE_URL'"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock postgres-service start ;;
stop) with_lock postgres-service stop ;;
restart) with_lock postgres-service stop; with_lock postgres-service start ;;
status) status ;;
env) print_env ;;
bronze-env) print_bronze_env ;;
psql) PGPASSWORD="$PG_PASSWORD" exec psql -X -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" "$@" ;;
reset) stop; log "deleting $PG_HOME"; rm -rf "$PG_HOME" ;;
*) echo "usage: $0 install|start|stop|restart|status|env|bronze-env|psql ARGS|reset" >&2; exit 2 ;;
esac
