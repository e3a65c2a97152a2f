#!/usr/bin/env bash
# Apache Superset in front of Trino, with the HAADE dashboard provisioned from the repository.
#
#   superset.sh install     make the venv (Superset 6.1.0, the Trino driver; pinned by
#                           superset/constraints.txt) in the cache, and the screenshot's tools
#                           (chromium from apt, playwright-core from npm) (once)
#   superset.sh start       install if needed, create the metadata database and the admin user on
#                           first start, start gunicorn, wait until GET /health answers
#   superset.sh provision   create or update, through Superset's REST API, the Trino database, the
#                           datasets, the charts and the dashboard "HAADE lakehouse"
#                           (k8s/base/analytics/provision.py, the same script as the cluster's Job; idempotent); prints the dashboard's URL
#   superset.sh screenshot --out FILE [--dashboard SLUG]
#                           log in with headless chromium (Debian's, driven by playwright-core from
#                           npm), open the dashboard, fail on a page error or an empty chart, and
#                           save a PNG
#   superset.sh stop        stop it; the metadata database stays
#   superset.sh restart     stop, then start
#   superset.sh status      exit 0 when running and answering, 3 when stopped
#   superset.sh env         export lines: HAADE_SUPERSET_URL, HAADE_SUPERSET_USER, HAADE_SUPERSET_PASSWORD
#   superset.sh reset       stop and delete the metadata database
#   superset.sh up          the whole local analytics stack over what a real run wrote: postgres,
#                           minio, rest, trino, superset, provision (SUPERSET_CATALOG=demo for the
#                           embedded demo's ./lakehouse)
#
# Listens on http://127.0.0.1:${HAADE_SUPERSET_PORT:-8088} only (gunicorn -b). The metadata database
# is SQLite in $HAADE_RUN/superset. Login admin / ${HAADE_SUPERSET_PASSWORD:-admin}: a local tool,
# not a deployment (k8s/base/analytics has that). It runs with TZ=UTC and the Trino connection
# sends the time zone UTC, so that filters on zone-less times never miss rows.
set -euo pipefail
SERVICE=superset
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUPERSET_VERSION=6.1.0
SUPERSET_HOST=127.0.0.1
SUPERSET_PORT="${HAADE_SUPERSET_PORT:-8088}"
SUPERSET_USER="${HAADE_SUPERSET_USER:-admin}"
SUPERSET_PASSWORD="${HAADE_SUPERSET_PASSWORD:-admin}"
START_TIMEOUT="${SUPERSET_START_TIMEOUT:-180}"
PYTHON="${PYTHON:-python3}"

REQS="$SERVICES_DIR/superset/requirements.txt"
CONSTRAINTS="$SERVICES_DIR/superset/constraints.txt"
PY_VER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
VENV_KEY="$({ printf '%s\n' "$PY_VER" "$SUPERSET_VERSION"; cat "$REQS" "$CONSTRAINTS" 2>/dev/null || true; } | sha256sum | cut -c1-12)"
VENV="$HAADE_CACHE/superset/venv-py$PY_VER-$VENV_KEY"
HOME_DIR="$HAADE_RUN/superset"
URL="http://$SUPERSET_HOST:$SUPERSET_PORT"
export PIP_CACHE_DIR="$HAADE_CACHE/pip"

make_venv() {
	[[ -f "$VENV/.complete" ]] && return 0
	log "creating venv $VENV (Superset $SUPERSET_VERSION and the Trino driver; the first time takes a few minutes)"
	rm -rf "$VENV"
	mkdir -p "$(dirname "$VENV")"
	"$PYTHON" -m venv "$VENV"
	local lf="$LOG_DIR/superset-install.log" c=()
	[[ -f "$CONSTRAINTS" ]] && c=(-c "$CONSTRAINTS")
	if ! {
		"${NICE[@]}" "$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip wheel &&
			"${NICE[@]}" "$VENV/bin/python" -m pip install --disable-pip-version-check "${c[@]}" -r "$REQS"
	} >"$lf" 2>&1; then
		tail_log "$lf" 60
		rm -rf "$VENV"
		die "pip install failed"
	fi
	"$VENV/bin/python" -c 'import superset, trino.sqlalchemy, rich, cachetools' >>"$lf" 2>&1 ||
		{ tail_log "$lf" 20; rm -rf "$VENV"; die "the new venv cannot import superset and the Trino dialect"; }
	"$VENV/bin/python" -m pip freeze --disable-pip-version-check >"$VENV/freeze.txt"
	touch "$VENV/.complete"
	log "venv ready: $VENV"
}

SHOT_SRC="$SERVICES_DIR/superset/screenshot"
SHOT_KEY="$(cat "$SHOT_SRC/package.json" "$SHOT_SRC/package-lock.json" | sha256sum | cut -c1-12)"
SHOT_DIR="$HAADE_CACHE/superset/screenshot-$SHOT_KEY"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

# The screenshot's tools: Debian's chromium, and playwright-core from npm (no browser download).
make_screenshot_tools() {
	if [[ ! -x "$CHROMIUM" ]]; then
		((EUID == 0)) || die "chromium is not installed, and only root can apt-get install chromium"
		log "installing chromium from Debian's packages"
		local lf="$LOG_DIR/chromium-install.log"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium >"$lf" 2>&1 || {
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update >>"$lf" 2>&1 || true
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium >>"$lf" 2>&1 ||
				{ tail_log "$lf"; die "apt-get install chromium failed"; }
		}
	fi
	[[ -f "$SHOT_DIR/.complete" ]] && return 0
	command -v npm >/dev/null || die "npm is not installed (apt-get install -y npm)"
	log "installing playwright-core into $SHOT_DIR (once)"
	rm -rf "$SHOT_DIR"
	mkdir -p "$SHOT_DIR"
	cp "$SHOT_SRC/package.json" "$SHOT_SRC/package-lock.json" "$SHOT_DIR/"
	(cd "$SHOT_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "${NICE[@]}" npm ci --no-audit --no-fund --loglevel=error) \
		>"$LOG_DIR/superset-npm.log" 2>&1 || { tail_log "$LOG_DIR/superset-npm.log"; rm -rf "$SHOT_DIR"; die "npm ci failed"; }
	touch "$SHOT_DIR/.complete"
}

install() {
	with_lock "superset-venv" make_venv
	with_lock "superset-screenshot" make_screenshot_tools
}

# screenshot ARGS: photograph the dashboard (screenshot/screenshot.mjs takes --out, --dashboard, ...).
screenshot() {
	[[ -f "$SHOT_DIR/.complete" ]] || die "the screenshot tools are not installed: superset.sh install"
	# An ES module finds its imports beside itself (NODE_PATH does not apply): run it from there.
	cp "$SHOT_SRC/screenshot.mjs" "$SHOT_DIR/screenshot.mjs"
	CHROMIUM="$CHROMIUM" HAADE_SUPERSET_USER="$SUPERSET_USER" \
		HAADE_SUPERSET_PASSWORD="$SUPERSET_PASSWORD" node "$SHOT_DIR/screenshot.mjs" --url "$URL" "$@"
}

# The environment every superset command runs in.
superset_env() {
	mkdir -p "$HOME_DIR"
	# A secret of this machine's own, made once; never in the repository.
	if [[ ! -s "$HOME_DIR/secret_key" ]]; then
		(umask 077 && head -c 32 /dev/urandom | base64 >"$HOME_DIR/secret_key")
	fi
	export TZ=UTC
	export SUPERSET_CONFIG_PATH="$SERVICES_DIR/superset/superset_config.py"
	export SUPERSET_HOME="$HOME_DIR"
	export HAADE_SUPERSET_DB="sqlite:///$HOME_DIR/superset.db"
	HAADE_SUPERSET_SECRET_KEY="$(cat "$HOME_DIR/secret_key")"
	export HAADE_SUPERSET_SECRET_KEY
	export FLASK_APP=superset
	export PATH="$VENV/bin:$PATH"
}

init_metadata() {
	[[ -f "$HOME_DIR/.initialised" ]] && return 0
	local lf="$LOG_DIR/superset-init.log"
	log "creating the metadata database $HOME_DIR/superset.db and user $SUPERSET_USER (once)"
	{
		"${NICE[@]}" superset db upgrade &&
			superset fab create-admin --username "$SUPERSET_USER" --firstname HAADE --lastname Admin \
				--email admin@haade.invalid --password "$SUPERSET_PASSWORD" &&
			"${NICE[@]}" superset init
	} >"$lf" 2>&1 || { tail_log "$lf" 60; die "superset init failed"; }
	touch "$HOME_DIR/.initialised"
}

ready() { curl -fsS --max-time 5 "$URL/health" | grep -q OK; }

start() {
	install
	superset_env
	if is_running superset; then
		wait_until superset "$START_TIMEOUT" "GET $URL/health" ready
		log "already running (pid $(pid_of superset)) at $URL"
		return 0
	fi
	ensure_port_free superset "$SUPERSET_HOST" "$SUPERSET_PORT"
	init_metadata
	log "starting Superset $SUPERSET_VERSION on $URL (metadata $HOME_DIR/superset.db)"
	# One worker with threads: a small footprint, and one process whose memory is the whole cost.
	spawn superset "$VENV/bin/gunicorn" --bind "$SUPERSET_HOST:$SUPERSET_PORT" --workers 1 --threads 8 \
		--worker-class gthread --timeout 120 --limit-request-line 0 --limit-request-field_size 0 \
		"superset.app:create_app()"
	wait_for_port superset "$SUPERSET_HOST" "$SUPERSET_PORT" "$START_TIMEOUT"
	wait_until superset "$START_TIMEOUT" "GET $URL/health" ready
	log "ready at $URL (pid $(pid_of superset)); login $SUPERSET_USER"
}

stop() { stop_pid superset 30; }

status() {
	if is_running superset && ready 2>/dev/null; then
		echo "superset: running (pid $(pid_of superset)) at $URL"
		return 0
	elif is_running superset; then
		echo "superset: process $(pid_of superset) alive but $URL/health does not answer"
		return 1
	fi
	echo "superset: stopped"
	return 3
}

provision() {
	install
	"$VENV/bin/python" "$SERVICES_DIR/../../k8s/base/analytics/provision.py" --url "$URL" --user "$SUPERSET_USER" --password "$SUPERSET_PASSWORD" "$@"
}

up() {
	local catalog="${SUPERSET_CATALOG:-iceberg}"
	if [[ "$catalog" != demo ]]; then
		"$SERVICES_DIR/postgres.sh" start
		"$SERVICES_DIR/minio.sh" start
		"$SERVICES_DIR/rest.sh" start
	fi
	"$SERVICES_DIR/trino.sh" start
	with_lock superset-service start
	provision --catalog "$catalog" --schema "${SUPERSET_SCHEMA:-lakehouse}"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock superset-service start ;;
stop) with_lock superset-service stop ;;
restart) with_lock superset-service stop; with_lock superset-service start ;;
status) status ;;
provision) provision "$@" ;;
screenshot) screenshot "$@" ;;
up) up ;;
env) printf 'export HAADE_SUPERSET_URL=%s\nexport HAADE_SUPERSET_USER=%s\nexport HAADE_SUPERSET_PASSWORD=%s\n' "$URL" "$SUPERSET_USER" "$SUPERSET_PASSWORD" ;;
reset) with_lock superset-service stop; log "deleting $HOME_DIR"; rm -rf "$HOME_DIR" ;;
*) echo "usage: $0 install|start|provision [--catalog C --schema S]|stop|restart|status|env|reset|up" >&2; exit 2 ;;
esac
