#!/usr/bin/env bash
# Backlog benchmark: Prism against the standalone Flink cluster, in the same run.
#   backlog.sh EVENTS ROUNDS [BUNDLE_MS...]       (default 1000000 3 100 250)
# Needs kafka.sh, minio.sh and flinkcluster.sh started, and bronze built static at $BRONZE
# (CGO_ENABLED=0 go build -o "$BRONZE" ./pipelines/bronze) and produce at $PRODUCE.
# Preloads EVENTS events into a fresh 8-partition topic, then, in each round, ingests the
# whole backlog with bronze --bounded into fresh tables on MinIO: on Prism (--runner=direct),
# then on Flink once per bundle time (--flink-max-bundle-time). Prints one line per run and
# the medians:
#   total   launch to exit (Flink: staging the ~200 MB worker and the job server's jars too)
#   ingest  Flink: from every task RUNNING (REST API) to exit; Prism: launch to exit
set -euo pipefail
EVENTS="${1:-1000000}"
ROUNDS="${2:-3}"
shift 2 || true
BUNDLES=("${@:-100 250}")
# shellcheck disable=SC2206
BUNDLES=(${BUNDLES[*]})
BRONZE="${BRONZE:?build bronze first}"
PRODUCE="${PRODUCE:?build pipelines/produce first}"
SERVICES="$(cd "$(dirname "$0")/.." && pwd)"
eval "$("$SERVICES/flinkcluster.sh" env)"
export AWS_ACCESS_KEY_ID=minioadmin AWS_SECRET_ACCESS_KEY=minioadmin AWS_REGION=us-east-1
REST="$HAADE_FLINK_REST"
WORK="$(mktemp -d /tmp/haade-backlog-XXXX)"
TOPIC="haade.backlog.$(date +%s)"
"$PRODUCE" --brokers=127.0.0.1:9092 --topic="$TOPIC" --partitions-create=8 --count="$EVENTS" --bad-ratio=0.01 >/dev/null 2>&1
echo "preloaded $EVENTS events into $TOPIC (8 partitions)"
ENVCFG="{\"command\":\"$HAADE_FLINK_WORKER_COMMAND\",\"env\":{\"AWS_ACCESS_KEY_ID\":\"minioadmin\",\"AWS_SECRET_ACCESS_KEY\":\"minioadmin\",\"AWS_REGION\":\"us-east-1\",\"HAADE_FLINK_BOOT\":\"$HAADE_FLINK_BOOT\"}}"

now() { date +%s.%N; }
run() { # name runner-args...
	local name="$1" n="$2"; shift 2
	local dir="$WORK/$name-$n" t0 t1 running=""
	mkdir -p "$dir"
	t0=$(now)
	"$BRONZE" --brokers=127.0.0.1:9092 --topic="$TOPIC" --bounded --commit-interval=2s --metrics-addr= \
		--catalog-uri="$dir/catalog.db" --warehouse="s3://warehouse/backlog/$name-$n-$$/" \
		--s3-endpoint=http://127.0.0.1:9000 --pipeline-id="backlog$n" "$@" >"$dir/log" 2>&1 &
	local pid=$!
	while kill -0 $pid 2>/dev/null; do
		if [[ -z "$running" && "$name" == flink* ]] &&
			curl -fsS --max-time 2 "$REST/jobs/overview" 2>/dev/null | python3 2>/dev/null -c '
import json, sys
for j in json.load(sys.stdin)["jobs"]:
    t = j["tasks"]
    if j["name"].startswith(sys.argv[1] + "-") and j["state"] == "RUNNING" and t["running"] + t["finished"] == t["total"]:
        sys.exit(0)
sys.exit(1)' "backlog$name$n"; then
			running=$(now)
		fi
		sleep 0.2
	done
	wait $pid || { echo "$name round $n failed:"; tail -20 "$dir/log"; exit 1; }
	t1=$(now)
	[[ -n "$running" ]] || running=$t0
	rows="$(awk '/lakehouse.bronze_events(_dlq)? / { s += $2 } END { print s + 0 }' "$dir/log")"
	[[ "$rows" == "$EVENTS" ]] || echo "$name round $n: MISMATCH: $rows rows in bronze + dead letters, want $EVENTS"
	printf '%-12s round %d  total %6.1f s  ingest %6.1f s\n' "$name" "$n" "$(echo "$t1 - $t0" | bc)" "$(echo "$t1 - $running" | bc)" |
		tee -a "$WORK/results"
}

for n in $(seq 1 "$ROUNDS"); do
	run prism "$n" --runner=direct
	for b in "${BUNDLES[@]}"; do
		run "flink${b}ms" "$n" --runner=flink --endpoint="$HAADE_FLINK_ENDPOINT" --flink-rest="$REST" \
			--environment_type=PROCESS --environment_config="$ENVCFG" --worker_binary="$BRONZE" \
			--flink-max-bundle-time="${b}ms" --job_name="backlogflink${b}ms$n"
	done
done
echo "medians of $ROUNDS rounds, $EVENTS events:"
for name in prism "${BUNDLES[@]/#/flink}"; do
	[[ "$name" == prism ]] || name="${name}ms"
	med() { awk -v n="$name" -v f="$1" '$1 == n { print $f }' "$WORK/results" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	printf '%-12s total %6.1f s  ingest %6.1f s\n' "$name" "$(med 5)" "$(med 8)"
done
echo "logs in $WORK"
