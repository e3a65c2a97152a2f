#!/usr/bin/env bash
# MinIO for the end-to-end tier, built from source and run as a separate process.
#
#   minio.sh install   build the server into the cache (about 5 minutes and 1.5 GB of RAM, once)
#   minio.sh start     install if needed, start on 127.0.0.1:9000 (console :9001),
#                      wait until it answers, create the bucket `warehouse`
#   minio.sh stop      stop it; the data dir stays, so `start` brings the same objects back
#   minio.sh status    running or not (exit 0 when running and healthy, 3 when stopped)
#   minio.sh restart   stop, then start
#   minio.sh env       print export lines for the AWS_* variables and the endpoint
#   minio.sh pipeline-env  the same for the pipeline user: `start` makes user haade-pipeline
#                      (secret haade-pipeline-secret) whose only policy, haade-warehouse-rw,
#                      allows listing the bucket `warehouse` and getting, putting and deleting
#                      its objects; nothing on any other bucket, no admin API
#
# MinIO is AGPLv3: it is only ever run as its own process, never imported.
set -euo pipefail
SERVICE=minio
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned: the newest commit of github.com/minio/minio that the Go proxy serves (2026-02-12).
# MinIO's RELEASE.* tags are not semver, so Go knows them only as pseudo-versions.
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
MINIO_HOST=127.0.0.1
MINIO_PORT="${MINIO_PORT:-9000}"
MINIO_CONSOLE_PORT="${MINIO_CONSOLE_PORT:-9001}"
MINIO_USER=minioadmin
MINIO_PASSWORD=minioadmin
MINIO_BUCKET="${MINIO_BUCKET:-warehouse}"
PIPELINE_USER="${MINIO_PIPELINE_USER:-haade-pipeline}"
PIPELINE_SECRET="${MINIO_PIPELINE_SECRET:-haade-pipeline-secret}"
START_TIMEOUT="${MINIO_START_TIMEOUT:-60}"

MINIO_BIN_DIR="$HAADE_CACHE/minio/$MINIO_VERSION/bin"
MINIO_BIN="$MINIO_BIN_DIR/minio"
MKBUCKET_BIN="$HAADE_CACHE/mkbucket/bin/mkbucket"
DATA_DIR="$HAADE_RUN/minio/data"
ENDPOINT="http://$MINIO_HOST:$MINIO_PORT"

build_minio() {
	[[ -x "$MINIO_BIN" ]] && return 0
	log "building minio $MINIO_VERSION from source into $MINIO_BIN_DIR (about 5 minutes; once)"
	mkdir -p "$MINIO_BIN_DIR"
	local lf="$LOG_DIR/minio-build.log" t0=$SECONDS
	# Outside the project's module, a local toolchain, no cgo: a static binary.
	if ! (cd "$HAADE_CACHE" && GOBIN="$MINIO_BIN_DIR" GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
		"${NICE[@]}" go install "github.com/minio/minio@$MINIO_VERSION") >"$lf" 2>&1; then
		tail_log "$lf" 60
		die "building minio $MINIO_VERSION failed"
	fi
	log "built minio in $((SECONDS - t0))s"
}

# The bucket tool is this repository's own code, so it is rebuilt when its sources change.
build_mkbucket() {
	local stamp_file="$HAADE_CACHE/mkbucket/stamp" stamp
	stamp="$(find "$REPO_ROOT/go.mod" "$REPO_ROOT/go.sum" "$REPO_ROOT/pipelines/mkbucket" "$REPO_ROOT/io/s3io" \
		-type f ! -name '*_test.go' -print0 | sort -z | xargs -0 cat | sha256sum | cut -d' ' -f1)"
	if [[ -x "$MKBUCKET_BIN" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
		return 0
	fi
	log "building mkbucket"
	mkdir -p "$(dirname "$MKBUCKET_BIN")"
	# As the Dockerfile builds it (cmdtest.Static), so the two share their compiled packages.
	(cd "$REPO_ROOT" && GOTOOLCHAIN=local CGO_ENABLED=0 "${NICE[@]}" go build -trimpath -ldflags=-w -o "$MKBUCKET_BIN" ./pipelines/mkbucket) ||
		die "building ./pipelines/mkbucket failed"
	echo "$stamp" >"$stamp_file"
}

install() {
	with_lock minio-build build_minio
	with_lock mkbucket-build build_mkbucket
}

healthy() {
	curl -fsS -o /dev/null --max-time 2 "$ENDPOINT/minio/health/ready"
}

start() {
	install
	if is_running minio; then
		if healthy; then
			log "already running (pid $(pid_of minio)) at $ENDPOINT"
			make_bucket
			return 0
		fi
		wait_until minio "$START_TIMEOUT" "$ENDPOINT/minio/health/ready" healthy
		make_bucket
		return 0
	fi
	ensure_port_free minio "$MINIO_HOST" "$MINIO_PORT"
	ensure_port_free minio "$MINIO_HOST" "$MINIO_CONSOLE_PORT"
	mkdir -p "$DATA_DIR"
	log "starting minio on $ENDPOINT (console http://$MINIO_HOST:$MINIO_CONSOLE_PORT), data in $DATA_DIR"
	MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
		MINIO_BROWSER_REDIRECT=off MINIO_UPDATE=off \
		spawn minio "$MINIO_BIN" server "$DATA_DIR" \
		--address "$MINIO_HOST:$MINIO_PORT" --console-address "$MINIO_HOST:$MINIO_CONSOLE_PORT" --quiet
	wait_for_port minio "$MINIO_HOST" "$MINIO_PORT" "$START_TIMEOUT"
	wait_until minio "$START_TIMEOUT" "$ENDPOINT/minio/health/ready" healthy
	make_bucket
	log "ready at $ENDPOINT (pid $(pid_of minio))"
}

make_bucket() {
	AWS_ACCESS_KEY_ID="$MINIO_USER" AWS_SECRET_ACCESS_KEY="$MINIO_PASSWORD" AWS_REGION=us-east-1 \
		PIPELINE_SECRET_ACCESS_KEY="$PIPELINE_SECRET" \
		"$MKBUCKET_BIN" --s3-endpoint "$ENDPOINT" --bucket "$MINIO_BUCKET" --timeout 30s --user "$PIPELINE_USER" ||
		fail_with_log "$(log_file minio)" "could not create bucket $MINIO_BUCKET and user $PIPELINE_USER"
}

stop() { stop_pid minio 30; }

status() {
	if is_running minio && healthy; then
		echo "minio: running (pid $(pid_of minio)) at $ENDPOINT, data in $DATA_DIR"
		return 0
	elif is_running minio; then
		echo "minio: process $(pid_of minio) alive but $ENDPOINT/minio/health/ready does not answer"
		return 1
	fi
	echo "minio: stopped"
	return 3
}

print_env() {
	cat <<EOF
export AWS_ACCESS_KEY_ID=$MINIO_USER
export AWS_SECRET_ACCESS_KEY=$MINIO_PASSWORD
export AWS_REGION=us-east-1
export HAADE_S3_ENDPOINT=$ENDPOINT
EOF
}

print_pipeline_env() {
	cat <<EOF
export AWS_ACCESS_KEY_ID=$PIPELINE_USER
export AWS_SECRET_ACCESS_KEY=$PIPELINE_SECRET
export AWS_REGION=us-east-1
export HAADE_S3_ENDPOINT=$ENDPOINT
EOF
}

case "${1:-}" in
install) install ;;
start) with_lock minio-service start ;;
stop) with_lock minio-service stop ;;
status) status ;;
restart) with_lock minio-service stop; with_lock minio-service start ;;
env) print_env ;;
pipeline-env) print_pipeline_env ;;
*) echo "usage: $0 install|start|stop|status|restart|env|pipeline-env" >&2; exit 2 ;;
esac
