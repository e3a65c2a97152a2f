#!/usr/bin/env bash
# Every service of the e2e tier at once.
#
#   all.sh start [NAME...]    postgres, minio, kafka, the python/spark install, then the
#                             Iceberg REST catalog
#   all.sh stop [NAME...]     in the reverse order
#   all.sh status [NAME...]   each one's status; exit 0 only when all run
#   all.sh install [NAME...]  fill the cache without starting anything (for CI warm-up)
#   all.sh env                export lines for all of them
#
# NAME limits it to some of: postgres minio kafka python rest.
set -euo pipefail
SERVICE=all
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL=(postgres minio kafka python rest)

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
names=("$@")
((${#names[@]})) || names=("${ALL[@]}")
for n in "${names[@]}"; do
	[[ " ${ALL[*]} " == *" $n "* ]] || die "unknown service '$n' (known: ${ALL[*]})"
done

run() { "$SERVICES_DIR/$1.sh" "$2"; }

case "$cmd" in
start)
	t0=$SECONDS
	for n in "${names[@]}"; do
		t=$SECONDS
		run "$n" start
		log "$n: start took $((SECONDS - t))s"
	done
	log "all started in $((SECONDS - t0))s"
	;;
install)
	for n in "${names[@]}"; do run "$n" install; done
	;;
stop)
	rc=0
	for ((i = ${#names[@]} - 1; i >= 0; i--)); do
		run "${names[i]}" stop || rc=1
	done
	exit $rc
	;;
status)
	rc=0
	for n in "${names[@]}"; do run "$n" status || rc=1; done
	exit $rc
	;;
env)
	"$SERVICES_DIR/minio.sh" env
	"$SERVICES_DIR/postgres.sh" env
	echo "export HAADE_BROKERS=127.0.0.1:9092"
	"$SERVICES_DIR/python.sh" env
	"$SERVICES_DIR/rest.sh" env
	;;
*) echo "usage: $0 start|stop|status|install|env [postgres|minio|kafka|python|rest ...]" >&2; exit 2 ;;
esac
