#!/bin/bash
# initdb on first start (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB), then
# postgres on 0.0.0.0:5432, as the official image does.
set -euo pipefail
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [[ ! -s $PGDATA/PG_VERSION ]]; then
  mkdir -p "$PGDATA" && chmod 700 "$PGDATA"
  pw=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" >"$pw"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" -A scram-sha-256 >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  [[ $db == postgres ]] || PGPASSWORD=$POSTGRES_PASSWORD psql -q -h /var/run/postgresql -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
