# shellcheck shell=bash
# Shared helpers for the service scripts in testing/services.
# Source it; do not run it. Every script sets `set -euo pipefail` itself.
#
#   HAADE_CACHE  downloads and builds, reused between runs (default ~/.cache/haade)
#   HAADE_RUN    data dirs, logs and pid files             (default /tmp/haade-services)

HAADE_CACHE="${HAADE_CACHE:-$HOME/.cache/haade}"
HAADE_RUN="${HAADE_RUN:-/tmp/haade-services}"
SERVICES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC2034 # used by the scripts that source this
REPO_ROOT="$(cd "$SERVICES_DIR/../.." && pwd)"
export HAADE_CACHE HAADE_RUN

LOG_DIR="$HAADE_RUN/logs"
PID_DIR="$HAADE_RUN/pids"
mkdir -p "$HAADE_CACHE" "$LOG_DIR" "$PID_DIR"

# Builds and downloads are polite to the other users of the 2 cores.
NICE=(nice -n 10)

log() { printf '[%s %s] %s\n' "$(date +%H:%M:%S)" "${SERVICE:-haade}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# tail_log FILE [LINES]: print the end of a log, framed, to stderr.
tail_log() {
	local f="$1" n="${2:-40}"
	if [[ -f "$f" ]]; then
		printf -- '----- last %s lines of %s -----\n' "$n" "$f" >&2
		tail -n "$n" "$f" >&2 || true
		printf -- '----- end of %s -----\n' "$f" >&2
	else
		printf -- '(no log at %s)\n' "$f" >&2
	fi
}

# fail_with_log FILE MESSAGE: the error every `start` gives when a service does not come up.
fail_with_log() {
	local f="$1"; shift
	log "ERROR: $*"
	tail_log "$f" 40
	exit 1
}

log_file() { echo "$LOG_DIR/$1.log"; }
pid_file() { echo "$PID_DIR/$1.pid"; }

# pid_of NAME: the recorded pid if that process is alive, else nothing (and status 1).
pid_of() {
	local pf pid
	pf="$(pid_file "$1")"
	[[ -f "$pf" ]] || return 1
	pid="$(cat "$pf" 2>/dev/null || true)"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	if kill -0 "$pid" 2>/dev/null; then
		echo "$pid"
		return 0
	fi
	return 1
}

is_running() { pid_of "$1" >/dev/null; }

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() {
	timeout 2 bash -c ": </dev/tcp/$1/$2" 2>/dev/null
}

# wait_for_port NAME HOST PORT TIMEOUT_SECONDS: wait until the port answers while the
# service's process stays alive; on failure show the log and exit.
wait_for_port() {
	local name="$1" host="$2" port="$3" timeout_s="$4" deadline
	deadline=$((SECONDS + timeout_s))
	while ((SECONDS < deadline)); do
		if port_open "$host" "$port"; then return 0; fi
		if ! is_running "$name"; then
			fail_with_log "$(log_file "$name")" "$name exited before $host:$port answered"
		fi
		sleep 0.5
	done
	fail_with_log "$(log_file "$name")" "$name: $host:$port did not answer within ${timeout_s}s"
}

# wait_until NAME TIMEOUT_SECONDS DESCRIPTION CMD...: retry CMD until it succeeds, while the
# service's process stays alive; on failure show the log and exit.
wait_until() {
	local name="$1" timeout_s="$2" what="$3" deadline
	shift 3
	deadline=$((SECONDS + timeout_s))
	while ((SECONDS < deadline)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		if [[ -n "$name" ]] && ! is_running "$name"; then
			fail_with_log "$(log_file "$name")" "$name exited before: $what"
		fi
		sleep 1
	done
	fail_with_log "$(log_file "$name")" "$name: timed out after ${timeout_s}s waiting for: $what"
}

# ensure_port_free NAME HOST PORT: refuse to start when a foreign process holds the port.
ensure_port_free() {
	if port_open "$2" "$3"; then
		die "$1: $2:$3 is already in use by a process these scripts did not start (see: ss -ltnp 'sport = :$3')"
	fi
}

# module_copy MODULE@VERSION DEST [MODULE...]: a writable copy of a Go module from the module
# proxy in DEST, made once (DEST/.ready), with its replace directives for the MODULEs dropped
# and those modules downloaded at the versions its go.mod requires. A main module whose go.mod
# replaces its own submodules with folders that its zip lacks (the Prometheus operator, Argo
# CD) then builds from the proxy alone.
module_copy() {
	local mv="$1" dest="$2" mod r
	shift 2
	[[ -f "$dest/.ready" ]] && return 0
	mod="$(GOFLAGS= go mod download -json "$mv" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error")))')"
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	cp -r "$mod" "$dest"
	chmod -R u+w "$dest"
	for r in "$@"; do
		(cd "$dest" && GOFLAGS= go mod edit -dropreplace="$r")
	done
	if (($#)); then
		(cd "$dest" && GOFLAGS=-mod=mod go mod download "$@")
	fi
	touch "$dest/.ready"
}

# spawn NAME CMD...: start CMD detached (own session, stdin closed), log to the service's
# log file, record its pid. The process outlives the calling script.
spawn() {
	local name="$1"; shift
	local lf
	lf="$(log_file "$name")"
	{ printf '\n===== %s starting: %s =====\n' "$(date -Is)" "$*"; } >>"$lf"
	# fd 9 is with_lock's lock: the daemon must not inherit it, or it would hold the lock.
	setsid "$@" </dev/null >>"$lf" 2>&1 9>&- &
	echo $! >"$(pid_file "$name")"
}

# stop_pid NAME [TIMEOUT_SECONDS]: SIGTERM the recorded process (and its process group),
# wait, then SIGKILL. Fine when it is not running.
stop_pid() {
	local name="$1" timeout_s="${2:-30}" pid deadline
	if ! pid="$(pid_of "$name")"; then
		rm -f "$(pid_file "$name")"
		log "$name is not running"
		return 0
	fi
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	deadline=$((SECONDS + timeout_s))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			log "$name did not stop within ${timeout_s}s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 1
			break
		fi
		sleep 0.5
	done
	rm -f "$(pid_file "$name")"
	log "$name stopped"
}

# with_lock NAME CMD...: run CMD holding an exclusive lock, so two concurrent installs of the
# same thing into the cache do not trample each other.
with_lock() {
	local name="$1"; shift
	mkdir -p "$HAADE_CACHE/locks"
	(
		flock -w 1800 9 || die "could not take the lock $HAADE_CACHE/locks/$name.lock"
		"$@"
	) 9>"$HAADE_CACHE/locks/$name.lock"
}

# mvn_run LOG ARGS...: Maven in batch mode, niced, with its own local repository inside the
# cache (so one folder holds every download), and its output in LOG, shown on failure.
mvn_run() {
	local lf="$1"; shift
	if ! "${NICE[@]}" mvn -B -q -ntp -Dmaven.repo.local="$HAADE_CACHE/m2" "$@" >"$lf" 2>&1; then
		tail_log "$lf" 60
		die "maven failed: mvn $*"
	fi
}

# timed LABEL CMD...: run CMD and log how long it took.
timed() {
	local label="$1" t0=$SECONDS
	shift
	"$@"
	log "$label took $((SECONDS - t0))s"
}
