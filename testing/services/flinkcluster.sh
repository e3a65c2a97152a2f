#!/usr/bin/env bash
# A standalone Apache Flink 1.19.0 cluster for the end-to-end tier: one JobManager and two
# TaskManagers, separate processes on 127.0.0.1, with Beam's Flink job server (flink.sh) in
# front of it (--flink-master=127.0.0.1:$FLINKC_REST_PORT). Checkpoints go to MinIO.
#
#   flinkcluster.sh install          assemble Flink from PyPI into the cache (once) and install
#                                    the job server (flink.sh install)
#   flinkcluster.sh start            install if needed, write the configuration, start the
#                                    JobManager, both TaskManagers and the job server; wait until
#                                    two TaskManagers are registered and the job server answers
#   flinkcluster.sh stop             stop all of it (jobs die; their checkpoints stay)
#   flinkcluster.sh status           exit 0 when everything runs, 3 when stopped, 1 otherwise
#   flinkcluster.sh env              export lines: the job endpoint, the REST URL, the worker command
#   flinkcluster.sh kill-taskmanager N|kill-jobmanager       kill -9 (for the failure tests)
#   flinkcluster.sh start-taskmanager N|start-jobmanager     start one again
#   flinkcluster.sh reset            stop and delete the run directory
#
# FLINKC_BEAM_CLASSPATH=1 (Beam's jars) and FLINKC_NATIVE_CLASSPATH=1 (Iceberg's own Flink sink
# and the Kafka SQL connector, flinknative.sh) at `start` add jars to the JVMs' class path; see
# beam_classpath and native_classpath below. Both together: one cluster for both contenders.
#
# Flink comes from PyPI, as the Apache release is not reachable from here: the sdist
# apache-flink-libraries==1.19.0 carries lib/, opt/ and plugins/, the wheel apache-flink==1.19.0
# carries bin/ and conf/. pip downloads both (no install) into $HAADE_CACHE/flink/pypi-1.19.0;
# run `install` where PyPI is reachable. The S3 plugin (flink-s3-fs-presto) is the jar flink.sh
# fetches from Maven Central for the job server.
#
# The embedded mode stays: `flink.sh start` alone runs the job server with its own MiniCluster.
set -euo pipefail
SERVICE=flinkcluster
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FLINK_VERSION=1.19.0 # the Flink of beam-runners-flink-1.19:2.62.0 (flink.sh)
HOST=127.0.0.1
REST_PORT="${FLINKC_REST_PORT:-8081}"
RPC_PORT="${FLINKC_RPC_PORT:-6123}"
TM_COUNT=2
TM_SLOTS="${FLINKC_SLOTS:-4}"
TM_MEMORY="${FLINKC_TM_MEMORY:-2048m}"
JM_MEMORY="${FLINKC_JM_MEMORY:-1024m}"
CHECKPOINT_DIR="${FLINK_CHECKPOINT_DIR:-s3://warehouse/checkpoints/bronze}"
CHECKPOINT_INTERVAL="${FLINK_CHECKPOINT_INTERVAL:-10s}"
S3_ENDPOINT="${FLINK_S3_ENDPOINT:-http://127.0.0.1:9000}"
S3_ACCESS_KEY="${AWS_ACCESS_KEY_ID:-minioadmin}"
S3_SECRET_KEY="${AWS_SECRET_ACCESS_KEY:-minioadmin}"
START_TIMEOUT="${FLINK_START_TIMEOUT:-120}"
JAVA="${JAVA:-java}"

PYPI_DIR="$HAADE_CACHE/flink/pypi-$FLINK_VERSION"
DIST="$HAADE_CACHE/flink/dist-$FLINK_VERSION"
S3_PLUGIN="$HAADE_CACHE/flink/beam-2.62.0-flink-$FLINK_VERSION/plugins/s3-fs-presto/flink-s3-fs-presto-$FLINK_VERSION.jar"
HOME_DIR="$HAADE_RUN/flinkcluster"
CONF_DIR="$HOME_DIR/conf"
BOOT="$HAADE_CACHE/flink/beam-boot-2.77.0"

fetch_flink() {
	[[ -f "$DIST/.complete" ]] && return 0
	mkdir -p "$PYPI_DIR"
	local sdist="$PYPI_DIR/apache-flink-libraries-$FLINK_VERSION.tar.gz" whl
	if [[ ! -f "$sdist" ]]; then
		log "downloading apache-flink-libraries==$FLINK_VERSION (sdist, 230 MB) from PyPI (once)"
		"${PIP:-pip3}" download -q --no-deps --no-binary :all: -d "$PYPI_DIR" "apache-flink-libraries==$FLINK_VERSION" ||
			die "pip download apache-flink-libraries==$FLINK_VERSION failed (is PyPI reachable?)"
	fi
	whl="$(ls "$PYPI_DIR"/apache_flink-"$FLINK_VERSION"-*.whl 2>/dev/null | head -1 || true)"
	if [[ -z "$whl" ]]; then
		log "downloading apache-flink==$FLINK_VERSION (wheel, bin/ and conf/) from PyPI (once)"
		# bin/ and conf/ are the same in every wheel: pin one, whatever Python runs pip.
		"${PIP:-pip3}" download -q --no-deps --only-binary :all: --python-version 3.11 --implementation cp \
			--platform manylinux1_x86_64 -d "$PYPI_DIR" "apache-flink==$FLINK_VERSION" ||
			die "pip download apache-flink==$FLINK_VERSION failed (is PyPI reachable?)"
		whl="$(ls "$PYPI_DIR"/apache_flink-"$FLINK_VERSION"-*.whl | head -1)"
	fi
	log "assembling Flink $FLINK_VERSION in $DIST"
	rm -rf "$DIST" "$DIST.tmp"
	mkdir -p "$DIST.tmp"
	tar -xzf "$sdist" -C "$DIST.tmp" --strip-components=2 "apache-flink-libraries-$FLINK_VERSION/deps/lib" \
		"apache-flink-libraries-$FLINK_VERSION/deps/opt" "apache-flink-libraries-$FLINK_VERSION/deps/plugins" \
		"apache-flink-libraries-$FLINK_VERSION/deps/bin" # bin/bash-java-utils.jar, which bin/config.sh runs
	python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.startswith(("pyflink/bin/", "pyflink/conf/")):
        z.extract(n, sys.argv[2])' "$whl" "$DIST.tmp/wheel"
	cp -r "$DIST.tmp/wheel/pyflink/bin/." "$DIST.tmp/bin/"
	mv "$DIST.tmp/wheel/pyflink/conf" "$DIST.tmp/"
	rm -rf "$DIST.tmp/wheel"
	chmod +x "$DIST.tmp"/bin/*.sh "$DIST.tmp"/bin/flink
	[[ -f "$DIST.tmp/lib/flink-dist-$FLINK_VERSION.jar" && -f "$DIST.tmp/bin/bash-java-utils.jar" ]] ||
		die "no lib/flink-dist-$FLINK_VERSION.jar or bin/bash-java-utils.jar in the sdist"
	mv "$DIST.tmp" "$DIST"
	touch "$DIST/.complete"
}

# Beam's Go boot program (the PROCESS environment's command), built from the module cache.
build_boot() {
	[[ -x "$BOOT" ]] && return 0
	log "building Beam's Go boot program into $BOOT"
	(cd "$REPO_ROOT" && "${NICE[@]}" go build -o "$BOOT.tmp" github.com/apache/beam/sdks/v2/go/container) ||
		die "go build github.com/apache/beam/sdks/v2/go/container failed"
	mv "$BOOT.tmp" "$BOOT"
}

install() {
	"$SERVICES_DIR/flink.sh" install
	with_lock "flink-dist-$FLINK_VERSION" fetch_flink
	with_lock "flink-boot" build_boot
	[[ -f "$S3_PLUGIN" ]] || die "$S3_PLUGIN is missing (flink.sh install brings it)"
}

write_config() {
	mkdir -p "$CONF_DIR" "$HOME_DIR/log" "$HOME_DIR/tmp"
	# The log4j files of the distribution, and our settings.
	cp "$DIST/conf/log4j.properties" "$DIST/conf/log4j-console.properties" "$CONF_DIR/"
	# Beam sends a PROCESS worker's output (boot's and the Go worker's) to /dev/null unless its
	# ProcessManager logs at DEBUG; then it goes to the TaskManager's stdout, the spawn log.
	for f in log4j.properties log4j-console.properties; do
		printf '%s\n' "logger.beamprocess.name = org.apache.beam.runners.fnexecution.environment.ProcessManager" \
			"logger.beamprocess.level = DEBUG" >>"$CONF_DIR/$f"
	done
	# The JVM options the distribution's own config.yaml sets for Java 17 (--add-opens/--add-exports):
	# without them Kryo fails on the JDK's collections (Iceberg's Flink sink sends its write results
	# through Kryo: "module java.base does not opens java.util").
	local java_opts
	java_opts="$(grep -m1 -E '^[[:space:]]+all: --add-' "$DIST/conf/config.yaml" | sed -E 's/^[[:space:]]+all: //')"
	[[ -n "$java_opts" ]] || die "no env.java.opts.all in $DIST/conf/config.yaml"
	cat >"$CONF_DIR/config.yaml" <<EOF
# Written by testing/services/flinkcluster.sh on every start.
env.java.opts.all: $java_opts
jobmanager.rpc.address: $HOST
jobmanager.rpc.port: $RPC_PORT
jobmanager.bind-host: $HOST
jobmanager.memory.process.size: $JM_MEMORY
taskmanager.host: $HOST
taskmanager.bind-host: $HOST
taskmanager.numberOfTaskSlots: $TM_SLOTS
taskmanager.memory.process.size: $TM_MEMORY
# Streaming the ~200 MB Go worker binary to a new worker after a TaskManager died overflowed
# the default direct memory of the survivor ("Cannot reserve ... direct buffer memory").
taskmanager.memory.task.off-heap.size: 512m
# Beam's portable operators and the hashmap state backend use no managed memory.
taskmanager.memory.managed.size: 64m
rest.address: $HOST
rest.bind-address: $HOST
rest.port: $REST_PORT
blob.server.port: 0
parallelism.default: 2
io.tmp.dirs: $HOME_DIR/tmp
execution.checkpointing.interval: $CHECKPOINT_INTERVAL
execution.checkpointing.mode: EXACTLY_ONCE
execution.checkpointing.timeout: 2min
execution.checkpointing.min-pause: 1s
execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION
state.backend.type: hashmap
state.checkpoints.dir: $CHECKPOINT_DIR
state.checkpoints.num-retained: 3
s3.endpoint: $S3_ENDPOINT
s3.path.style.access: true
s3.access-key: $S3_ACCESS_KEY
s3.secret-key: $S3_SECRET_KEY
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 20
restart-strategy.fixed-delay.delay: 5s
heartbeat.timeout: 20000
EOF
	# The plugins of the distribution plus the S3 one.
	mkdir -p "$HOME_DIR/plugins/s3-fs-presto"
	cp -f "$S3_PLUGIN" "$HOME_DIR/plugins/s3-fs-presto/"
}

# FLINKC_BEAM_CLASSPATH=1 puts the job server's Beam jars (flink.sh's, less the Flink and
# logging jars the distribution has, the SDF state patch first) on the JobManager's and the
# TaskManagers' class path, through HADOOP_CLASSPATH, which bin/config.sh appends. A job
# submitted with --flink-cluster-classpath then ships none of them: without it, each job
# uploads the job server's ~150 MB class path to the blob server and every TaskManager fetches
# it (84 s of a 100k-event bounded run under a load of 30). `env` says which mode runs.
BEAM_LIBS="$HAADE_CACHE/flink/beam-2.62.0-flink-$FLINK_VERSION"
beam_classpath() {
	# A TaskManager or JobManager started again (start-taskmanager) keeps the mode of start.
	[[ "${FLINKC_BEAM_CLASSPATH:-$(cat "$HOME_DIR/beam-classpath" 2>/dev/null)}" == 1 ]] || return 0
	local cp="" j
	[[ "${FLINK_SDF_PATCH:-on}" == off ]] || cp="$BEAM_LIBS/patch-sdfstate/haade-sdfstate.jar"
	for j in "$BEAM_LIBS"/libs/*.jar; do
		case "$(basename "$j")" in flink-* | log4j-* | slf4j-*) continue ;; esac
		cp="$cp:$j"
	done
	echo "${cp#:}"
}

# FLINKC_NATIVE_CLASSPATH=1 puts the jars of Iceberg's own Flink sink (flinknative.sh: Iceberg's
# Flink runtime, the Kafka SQL connector, Iceberg's AWS bundle, Hadoop's shaded client, the
# PostgreSQL driver) on the same class path, after Beam's, as a Flink user puts them in lib/: the
# side-by-side harness's native contender, Flink SQL submitted by flinknative.sh sql-client, needs
# them on the JobManager and the TaskManagers. `env` says which mode runs.
native_classpath() {
	[[ "${FLINKC_NATIVE_CLASSPATH:-$(cat "$HOME_DIR/native-classpath" 2>/dev/null)}" == 1 ]] || return 0
	"$SERVICES_DIR/flinknative.sh" classpath
}

# cluster_classpath: Beam's jars, then the native ones, for HADOOP_CLASSPATH.
cluster_classpath() {
	local beam native
	beam="$(beam_classpath)"
	native="$(native_classpath)"
	if [[ -n "$beam" && -n "$native" ]]; then echo "$beam:$native"; else echo "$beam$native"; fi
}

# The environment of Flink's scripts (bin/config.sh reads these, and appends HADOOP_CLASSPATH to
# the class path); the scripts exec java, so the recorded pid is the JVM's.
flink_env() {
	FLINK_ENV=(env FLINK_CONF_DIR="$CONF_DIR" FLINK_LOG_DIR="$HOME_DIR/log" FLINK_PID_DIR="$HOME_DIR"
		HADOOP_CLASSPATH="$(cluster_classpath)"
		FLINK_PLUGINS_DIR="$HOME_DIR/plugins" FLINK_HOME="$DIST"
		JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v "$JAVA")")")")}")
}

rest() { curl -fsS --max-time 3 "http://$HOST:$REST_PORT$1"; }
registered_tms() { rest /taskmanagers | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["taskmanagers"]))'; }
two_tms() { [[ "$(registered_tms 2>/dev/null)" -ge $TM_COUNT ]]; }

start_jobmanager() {
	if is_running flink-jobmanager; then return 0; fi
	ensure_port_free flink-jobmanager "$HOST" "$REST_PORT"
	log "starting the JobManager (REST http://$HOST:$REST_PORT, RPC $HOST:$RPC_PORT)"
	flink_env
	spawn flink-jobmanager "${FLINK_ENV[@]}" "$DIST/bin/jobmanager.sh" start-foreground
	wait_until flink-jobmanager "$START_TIMEOUT" "the JobManager's REST API on $HOST:$REST_PORT" rest /overview
}

start_taskmanager() {
	local n="$1"
	if is_running "flink-taskmanager-$n"; then return 0; fi
	log "starting TaskManager $n ($TM_SLOTS slots, $TM_MEMORY)"
	flink_env
	spawn "flink-taskmanager-$n" "${FLINK_ENV[@]}" "$DIST/bin/taskmanager.sh" start-foreground \
		-Dtaskmanager.resource-id="tm-$n"
}

kill9() {
	local name="$1" pid
	pid="$(pid_of "$name")" || die "$name is not running"
	log "kill -9 $name (pid $pid)"
	kill -KILL "$pid"
	rm -f "$(pid_file "$name")"
}

start() {
	install
	[[ "$CHECKPOINT_DIR" == file://* ]] && mkdir -p "${CHECKPOINT_DIR#file://}"
	write_config
	if [[ "${FLINKC_BEAM_CLASSPATH:-0}" == 1 ]]; then echo 1 >"$HOME_DIR/beam-classpath"; else rm -f "$HOME_DIR/beam-classpath"; fi
	if [[ "${FLINKC_NATIVE_CLASSPATH:-0}" == 1 ]]; then
		"$SERVICES_DIR/flinknative.sh" install
		echo 1 >"$HOME_DIR/native-classpath"
	else
		rm -f "$HOME_DIR/native-classpath"
	fi
	start_jobmanager
	for n in $(seq 1 $TM_COUNT); do start_taskmanager "$n"; done
	local deadline=$((SECONDS + START_TIMEOUT))
	until two_tms; do
		for n in $(seq 1 $TM_COUNT); do
			is_running "flink-taskmanager-$n" ||
				fail_with_log "$(log_file "flink-taskmanager-$n")" "TaskManager $n exited before it registered"
		done
		((SECONDS < deadline)) || fail_with_log "$(log_file flink-jobmanager)" "$TM_COUNT TaskManagers did not register within ${START_TIMEOUT}s"
		sleep 1
	done
	FLINK_MASTER="$HOST:$REST_PORT" FLINK_CHECKPOINT_DIR="$CHECKPOINT_DIR" FLINK_S3_ENDPOINT="$S3_ENDPOINT" \
		"$SERVICES_DIR/flink.sh" start
	log "ready: Flink REST http://$HOST:$REST_PORT, $TM_COUNT TaskManagers; job server $HOST:${FLINK_JOB_PORT:-8099}"
}

stop() {
	"$SERVICES_DIR/flink.sh" stop
	for n in $(seq 1 $TM_COUNT); do stop_pid "flink-taskmanager-$n" 30; done
	stop_pid flink-jobmanager 30
	reap_workers
}

# reap_workers kills what the PROCESS environment left behind: boot programs and Go workers
# whose TaskManager is gone (worker-process.sh normally does it itself).
reap_workers() {
	local pids
	# First the staging directories (and boot programs) of worker-process.sh copies killed
	# with SIGKILL, then any boot program left.
	"$SERVICES_DIR/flink/worker-process.sh" --sweep
	pids="$(pgrep -f "^$BOOT " || true)"
	[[ -z "$pids" ]] && return 0
	log "killing leftover boot programs: $pids"
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

status() {
	local down=0 up=0
	for s in flink-jobmanager flink-taskmanager-1 flink-taskmanager-2; do
		if is_running "$s"; then up=$((up + 1)); else down=$((down + 1)); fi
	done
	if ((up == 0)) && ! "$SERVICES_DIR/flink.sh" status >/dev/null 2>&1; then
		echo "flinkcluster: stopped"
		return 3
	fi
	if ((down == 0)) && two_tms && "$SERVICES_DIR/flink.sh" status >/dev/null 2>&1; then
		echo "flinkcluster: running: JobManager http://$HOST:$REST_PORT, $(registered_tms) TaskManagers, job server $HOST:${FLINK_JOB_PORT:-8099}"
		return 0
	fi
	echo "flinkcluster: partly running ($up of 3 Flink processes)"
	return 1
}

print_env() {
	cat <<EOF
export HAADE_FLINK_ENDPOINT=$HOST:${FLINK_JOB_PORT:-8099}
export HAADE_FLINK_REST=http://$HOST:$REST_PORT
export HAADE_FLINK_BOOT=$BOOT
export HAADE_FLINK_WORKER_COMMAND=$SERVICES_DIR/flink/worker-process.sh
export HAADE_FLINK_BEAM_CLASSPATH=$(cat "$HOME_DIR/beam-classpath" 2>/dev/null || echo 0)
export HAADE_FLINK_NATIVE_CLASSPATH=$(cat "$HOME_DIR/native-classpath" 2>/dev/null || echo 0)
EOF
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock flinkcluster-service start ;;
stop) with_lock flinkcluster-service stop ;;
restart) with_lock flinkcluster-service stop; with_lock flinkcluster-service start ;;
status) status ;;
env) print_env ;;
kill-taskmanager) kill9 "flink-taskmanager-${1:?N}" ;;
kill-jobmanager) kill9 flink-jobmanager ;;
start-taskmanager) write_config; start_taskmanager "${1:?N}" ;;
start-jobmanager) write_config; start_jobmanager ;;
reset) with_lock flinkcluster-service stop; log "deleting $HOME_DIR"; rm -rf "$HOME_DIR" ;;
*) echo "usage: $0 install|start|stop|restart|status|env|kill-taskmanager N|kill-jobmanager|start-taskmanager N|start-jobmanager|reset" >&2; exit 2 ;;
esac
