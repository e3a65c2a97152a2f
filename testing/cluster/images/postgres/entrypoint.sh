#!/bin/bash
# initdb on first start (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB), then
# the scripts in /docker-entrypoint-initdb.d, then postgres on 0.0.0.0:5432,
# as the official image does.
set -euo pipefail
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
  pw=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$pw"
  # UTF8, as the official image: pgdriver (bronze's catalog) refuses SQL_ASCII.
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" -A scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  [[ $db == postgres ]] || PGPASSWORD=$POSTGRES_PASSWORD psql -q -h /var/run/postgresql -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
  # As the official image: the scripts of /docker-entrypoint-initdb.d (a
  # ConfigMap mount), in name order, against the new database.
  for f in /docker-entrypoint-initdb.d/*; do
    [[ -f $f ]] || continue
    case $f in
    *.sh) PGHOST=/var/run/postgresql PGPASSWORD=$POSTGRES_PASSWORD POSTGRES_USER=$user POSTGRES_DB=$db bash "$f" ;;
    *.sql) PGPASSWORD=$POSTGRES_PASSWORD psql -q -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$user" -d "$db" -f "$f" ;;
    *) echo "postgres-entrypoint: ignoring $f" >&2 ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
