#!/usr/bin/env bash
# Apache Flink for the end-to-end tier: Beam's Flink job server, with its embedded Flink
# (a MiniCluster inside the job server's JVM, `--flink-master=[local]`, the default) or in
# front of a standalone Flink cluster (FLINK_MASTER=127.0.0.1:8081, which flinkcluster.sh
# sets when it starts the cluster and this job server).
#
#   flink.sh install   fetch the jars with Maven into the cache (once)
#   flink.sh start     install if needed, write the Flink configuration, start the job server,
#                      wait until it accepts jobs
#   flink.sh stop      stop it (running jobs die with it; their checkpoints stay)
#   flink.sh restart   stop, then start
#   flink.sh status    exit 0 when running and answering, 3 when stopped
#   flink.sh env       print the job endpoint and the checkpoint settings as export lines
#   flink.sh conf      print the Flink configuration the job server reads
#   flink.sh reset     stop and delete the checkpoints and staged artifacts
#
# Job service 127.0.0.1:8099, artifact service 127.0.0.1:8098 (Beam's defaults). Submit with
#   go run ./pipelines/bronze --runner=flink --endpoint=127.0.0.1:8099 --environment_type=LOOPBACK ...
#
# Checkpoints: every FLINK_CHECKPOINT_INTERVAL (default 10s), exactly-once mode, the hashmap
# state backend, to FLINK_CHECKPOINT_DIR:
#   default              file://$HAADE_RUN/flink/checkpoints
#   FLINK_CHECKPOINT_DIR=s3://warehouse/checkpoints/bronze   on MinIO (minio.sh), through
#                        flink-s3-fs-presto with the MinIO endpoint and credentials below.
# Beam's Go SDK cannot pass Flink options with the job, so they live in the configuration
# the job server reads (--flink-conf-dir); a change needs `flink.sh restart`.
set -euo pipefail
SERVICE=flink
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned. Maven Central, as reached from here, serves no beam-runners-flink-*-job-server jar
# at all, and the runner module resolves with its dependencies only at Beam 2.62.0 for Flink
# 1.19 (see FLINK.md): the job server is FlinkJobServerDriver on that module's class path.
BEAM_VERSION="${FLINK_BEAM_VERSION:-2.62.0}" # org.apache.beam:beam-runners-flink-1.19
FLINK_MINOR=1.19
FLINK_VERSION=1.19.0 # the Flink that beam-runners-flink-1.19:2.62.0 depends on
LOG4J_VERSION=2.24.3
FLINK_HOST=127.0.0.1
# The address the job server binds and advertises to submitters as its artifact endpoint
# (BindLoopback makes Beam's servers bind it). 127.0.0.1 by default; set it to an address of
# this host that other hosts reach to submit from elsewhere (as jobserver.yaml does with the
# pod IP). Never 0.0.0.0: a submitter would dial its own loopback.
JOB_HOST="${FLINK_JOB_HOST:-127.0.0.1}"
# [local]: a MiniCluster per job inside the job server; host:port: a Flink cluster's REST API.
FLINK_MASTER="${FLINK_MASTER:-[local]}"
JOB_PORT="${FLINK_JOB_PORT:-8099}"
ARTIFACT_PORT="${FLINK_ARTIFACT_PORT:-8098}"
REST_PORTS="${FLINK_REST_PORTS:-8081-8089}"
FLINK_HEAP="${FLINK_HEAP:--Xmx2g -Xms256m}"
FLINK_PARALLELISM="${FLINK_PARALLELISM:-2}"
FLINK_SLOTS="${FLINK_SLOTS:-4}"
CHECKPOINT_INTERVAL="${FLINK_CHECKPOINT_INTERVAL:-10s}"
CHECKPOINT_MIN_PAUSE="${FLINK_CHECKPOINT_MIN_PAUSE:-1s}"
START_TIMEOUT="${FLINK_START_TIMEOUT:-120}"
S3_ENDPOINT="${FLINK_S3_ENDPOINT:-http://127.0.0.1:9000}"
S3_ACCESS_KEY="${AWS_ACCESS_KEY_ID:-minioadmin}"
S3_SECRET_KEY="${AWS_SECRET_ACCESS_KEY:-minioadmin}"

VERSION_DIR="$HAADE_CACHE/flink/beam-$BEAM_VERSION-flink-$FLINK_VERSION"
LIBS="$VERSION_DIR/libs"
PLUGINS="$VERSION_DIR/plugins"
PATCH_DIR="$VERSION_DIR/patch"
# flink/sdfstate: flat SDF residual state (Beam #27648); FLINK_SDF_PATCH=off runs stock 2.62.
SDF_PATCH_DIR="$VERSION_DIR/patch-sdfstate"
SDF_CP="$SDF_PATCH_DIR/haade-sdfstate.jar:"; [[ "${FLINK_SDF_PATCH:-on}" == off ]] && SDF_CP=""
# The same classes as a jar: a job sent to a remote cluster ships the job server's class path
# as jars, and a directory on it is not shipped.
PATCH_JAR="$VERSION_DIR/haade-jobserver-patch.jar"
# flink/haade/NoStagedJars.java: a detector that stages none of the job server's jars, for a
# cluster that has them on its class path (flinkcluster.sh, FLINKC_BEAM_CLASSPATH=1; bronze
# --flink-cluster-classpath). Its own jar, so that the other patches' jar stays as it was.
NOSTAGED_DIR="$VERSION_DIR/patch-nostaged"
NOSTAGED_JAR="$NOSTAGED_DIR/haade-nostaged.jar"
HOME_DIR="$HAADE_RUN/flink"
CONF_DIR="$HOME_DIR/conf"
CHECKPOINT_DIR="${FLINK_CHECKPOINT_DIR:-file://$HOME_DIR/checkpoints}"
ARTIFACTS_DIR="$HOME_DIR/artifacts"
LOG4J_CONF="$CONF_DIR/log4j2.properties"
JAVA="${JAVA:-java}"

fetch_jars() {
	[[ -f "$VERSION_DIR/.complete" ]] && return 0
	log "fetching Beam $BEAM_VERSION's Flink $FLINK_VERSION job server jars with Maven into $VERSION_DIR (once)"
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	rm -rf "$VERSION_DIR"
	mkdir -p "$LIBS" "$PLUGINS/s3-fs-presto"
	mvn_run "$LOG_DIR/flink-fetch.log" -f "$SERVICES_DIR/flink/pom.xml" \
		-Dbeam.version="$BEAM_VERSION" -Dflink.minor="$FLINK_MINOR" -Dflink.version="$FLINK_VERSION" \
		-Dlog4j.version="$LOG4J_VERSION" \
		dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS"
	ls "$LIBS/beam-runners-flink-$FLINK_MINOR-$BEAM_VERSION.jar" >/dev/null ||
		die "Maven did not bring beam-runners-flink-$FLINK_MINOR-$BEAM_VERSION.jar"
	# Flink loads S3 file systems as plugins, each in its own class loader.
	mv "$LIBS/flink-s3-fs-presto-$FLINK_VERSION.jar" "$PLUGINS/s3-fs-presto/" ||
		die "Maven did not bring flink-s3-fs-presto-$FLINK_VERSION.jar"
	touch "$VERSION_DIR/.complete"
}

# Two small changes to the job server, built once into $PATCH_DIR (first on its class path):
#  - flink/BindLoopback.java: Beam's gRPC servers bind every interface whatever --job-host
#    says; it rewrites the one method that builds them so that they bind 127.0.0.1.
#  - flink/JobServerMain.java: the main class; it initialises Flink's file systems with the
#    configuration and the plugins (s3:// checkpoints), then runs FlinkJobServerDriver.
build_patch() {
	local stamp
	stamp="$(cat "$SERVICES_DIR/flink/BindLoopback.java" "$SERVICES_DIR/flink/JobServerMain.java" | sha256sum | cut -d' ' -f1)"
	[[ -f "$PATCH_DIR/.stamp" && "$(cat "$PATCH_DIR/.stamp")" == "$stamp" && -f "$PATCH_JAR" ]] && return 0
	log "building the job server patches (flink/BindLoopback.java, flink/JobServerMain.java)"
	rm -rf "$PATCH_DIR"
	mkdir -p "$PATCH_DIR"
	"$JAVA" -cp "$LIBS/flink-shaded-asm-9-9.5-17.0.jar:$LIBS/beam-sdks-java-core-$BEAM_VERSION.jar" \
		"$SERVICES_DIR/flink/BindLoopback.java" "$PATCH_DIR" >>"$LOG_DIR/flink-fetch.log" 2>&1 ||
		fail_with_log "$LOG_DIR/flink-fetch.log" "BindLoopback could not patch beam-sdks-java-core-$BEAM_VERSION.jar"
	"${JAVAC:-javac}" -nowarn -d "$PATCH_DIR" -cp "$LIBS/*" "$SERVICES_DIR/flink/JobServerMain.java" \
		>>"$LOG_DIR/flink-fetch.log" 2>&1 ||
		fail_with_log "$LOG_DIR/flink-fetch.log" "javac flink/JobServerMain.java failed"
	rm -f "$PATCH_JAR"
	"${JAR:-jar}" cf "$PATCH_JAR" -C "$PATCH_DIR" org -C "$PATCH_DIR" JobServerMain.class ||
		die "could not pack $PATCH_DIR into $PATCH_JAR"
	echo "$stamp" >"$PATCH_DIR/.stamp"
}

build_nostaged() {
	local stamp
	stamp="$(sha256sum <"$SERVICES_DIR/flink/haade/NoStagedJars.java" | cut -d' ' -f1)"
	[[ -f "$NOSTAGED_DIR/.stamp" && "$(cat "$NOSTAGED_DIR/.stamp")" == "$stamp" && -f "$NOSTAGED_JAR" ]] && return 0
	log "building flink/haade/NoStagedJars.java"
	rm -rf "$NOSTAGED_DIR"
	mkdir -p "$NOSTAGED_DIR/classes"
	"${JAVAC:-javac}" -nowarn -d "$NOSTAGED_DIR/classes" -cp "$LIBS/*" "$SERVICES_DIR/flink/haade/NoStagedJars.java" \
		>>"$LOG_DIR/flink-fetch.log" 2>&1 ||
		fail_with_log "$LOG_DIR/flink-fetch.log" "javac flink/haade/NoStagedJars.java failed"
	"${JAR:-jar}" cf "$NOSTAGED_JAR" -C "$NOSTAGED_DIR/classes" haade || die "could not pack $NOSTAGED_JAR"
	echo "$stamp" >"$NOSTAGED_DIR/.stamp"
}

install() {
	"$JAVA" -version >/dev/null 2>&1 || die "no java on PATH (Flink $FLINK_VERSION runs on Java 11 or 17)"
	with_lock "flink-$BEAM_VERSION-$FLINK_VERSION" fetch_jars
	with_lock "flink-$BEAM_VERSION-$FLINK_VERSION" build_patch
	with_lock "flink-$BEAM_VERSION-$FLINK_VERSION" build_nostaged
	with_lock "flink-$BEAM_VERSION-$FLINK_VERSION" "$SERVICES_DIR/flink/sdfstate/build.sh" "$LIBS" "$SDF_PATCH_DIR" # flink/sdfstate
}

write_config() {
	mkdir -p "$CONF_DIR" "$ARTIFACTS_DIR"
	[[ "$CHECKPOINT_DIR" == file://* ]] && mkdir -p "${CHECKPOINT_DIR#file://}"
	# flink-conf.yaml, the flat format Flink 1.19 still reads (config.yaml is the new one; a
	# directory must not hold both).
	cat >"$CONF_DIR/flink-conf.yaml" <<EOF
# Written by testing/services/flink.sh; rewritten on every start.
# Checkpointing: Beam's Go SDK cannot set it per job, so it is set here for every job.
execution.checkpointing.interval: $CHECKPOINT_INTERVAL
execution.checkpointing.mode: EXACTLY_ONCE
execution.checkpointing.timeout: 2min
execution.checkpointing.min-pause: ${CHECKPOINT_MIN_PAUSE}
execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION
execution.checkpointing.checkpoints-after-tasks-finish.enabled: true
state.backend.type: hashmap
state.checkpoints.dir: $CHECKPOINT_DIR
state.checkpoints.num-retained: 3
# S3 (MinIO) for s3:// checkpoint directories, through flink-s3-fs-presto.
s3.endpoint: $S3_ENDPOINT
s3.path.style.access: true
s3.access-key: $S3_ACCESS_KEY
s3.secret-key: $S3_SECRET_KEY
# The embedded cluster: loopback only, one TaskManager.
parallelism.default: $FLINK_PARALLELISM
taskmanager.numberOfTaskSlots: $FLINK_SLOTS
jobmanager.rpc.address: $FLINK_HOST
jobmanager.bind-host: $FLINK_HOST
taskmanager.host: $FLINK_HOST
taskmanager.bind-host: $FLINK_HOST
# Beam's [local] master starts one MiniCluster per job; its REST API (jobs, checkpoints,
# watermarks) takes the first free port of this range.
rest.address: $FLINK_HOST
rest.bind-address: $FLINK_HOST
rest.bind-port: $REST_PORTS
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 3
restart-strategy.fixed-delay.delay: 5s
EOF
	cat >"$LOG4J_CONF" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c{1})%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.flink.name = org.apache.flink
logger.flink.level = WARN
logger.checkpoint.name = org.apache.flink.runtime.checkpoint.CheckpointCoordinator
logger.checkpoint.level = INFO
logger.execgraph.name = org.apache.flink.runtime.executiongraph.ExecutionGraph
logger.execgraph.level = INFO
logger.jobmaster.name = org.apache.flink.runtime.jobmaster.JobMaster
logger.jobmaster.level = INFO
logger.beam.name = org.apache.beam
logger.beam.level = INFO
logger.grpc.name = org.apache.beam.vendor.grpc
logger.grpc.level = WARN
EOF
}

# ready: the job service accepts connections and the driver logged that it serves jobs.
ready() {
	port_open "$JOB_HOST" "$JOB_PORT" && grep -q "JobService started on" "$(log_file flink)"
}

start() {
	install
	if is_running flink && [[ "$(cat "$HOME_DIR/master" 2>/dev/null)" != "$FLINK_MASTER" ]]; then
		log "running with --flink-master=$(cat "$HOME_DIR/master" 2>/dev/null); restarting it with $FLINK_MASTER"
		stop
	fi
	if is_running flink; then
		wait_until flink "$START_TIMEOUT" "the job service on $JOB_HOST:$JOB_PORT" ready
		log "already running (pid $(pid_of flink)) at $JOB_HOST:$JOB_PORT"
		return 0
	fi
	[[ "$JOB_HOST" != 0.0.0.0 && "$JOB_HOST" != "::" ]] ||
		die "FLINK_JOB_HOST=$JOB_HOST: the job server advertises it as its artifact endpoint; give an address submitters can dial"
	ensure_port_free flink "$JOB_HOST" "$JOB_PORT"
	ensure_port_free flink "$JOB_HOST" "$ARTIFACT_PORT"
	# What earlier runs staged (about 200 MB a submission) and never cleaned: the job server
	# cleans a job's artifacts when the job ends, not when it is killed with it.
	rm -rf "$ARTIFACTS_DIR"
	write_config
	echo "$FLINK_MASTER" >"$HOME_DIR/master"
	log "starting Beam $BEAM_VERSION Flink job server (Flink $FLINK_VERSION, master $FLINK_MASTER) on $JOB_HOST:$JOB_PORT," \
		"checkpoints every $CHECKPOINT_INTERVAL to $CHECKPOINT_DIR"
	# A fresh log section, so that `ready` does not see an earlier run's line.
	: >"$(log_file flink)"
	# The job server writes pipeline_options.json into its working directory: keep it here.
	cd "$HOME_DIR"
	# shellcheck disable=SC2086 # FLINK_HEAP holds several options
	FLINK_PLUGINS_DIR="$PLUGINS" FLINK_CONF_DIR="$CONF_DIR" \
		spawn flink "$JAVA" $FLINK_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
		-Dlog4j2.configurationFile="$LOG4J_CONF" -Djava.net.preferIPv4Stack=true \
		-cp "$SDF_CP$PATCH_JAR:$NOSTAGED_JAR:$LIBS/*" JobServerMain \
		--flink-master="$FLINK_MASTER" --flink-conf-dir="$CONF_DIR" \
		--job-host="$JOB_HOST" --job-port="$JOB_PORT" --artifact-port="$ARTIFACT_PORT" \
		--expansion-port=-1 --artifacts-dir="$ARTIFACTS_DIR" --clean-artifacts-per-job=true
	wait_until flink "$START_TIMEOUT" "the job service on $JOB_HOST:$JOB_PORT" ready
	log "ready at $JOB_HOST:$JOB_PORT (pid $(pid_of flink))"
}

stop() { stop_pid flink 30; }

status() {
	if is_running flink && ready; then
		echo "flink: running (pid $(pid_of flink)) at $JOB_HOST:$JOB_PORT, Beam $BEAM_VERSION, Flink $FLINK_VERSION, master $(cat "$HOME_DIR/master" 2>/dev/null), checkpoints in $(sed -n 's/^state.checkpoints.dir: //p' "$CONF_DIR/flink-conf.yaml" 2>/dev/null)"
		return 0
	elif is_running flink; then
		echo "flink: process $(pid_of flink) alive but $JOB_HOST:$JOB_PORT does not answer"
		return 1
	fi
	echo "flink: stopped"
	return 3
}

print_env() {
	cat <<EOF
export HAADE_FLINK_ENDPOINT=$JOB_HOST:$JOB_PORT
export HAADE_FLINK_CHECKPOINT_DIR=$CHECKPOINT_DIR
export HAADE_FLINK_CHECKPOINT_INTERVAL=$CHECKPOINT_INTERVAL
EOF
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock flink-service start ;;
stop) with_lock flink-service stop ;;
restart) with_lock flink-service stop; with_lock flink-service start ;;
status) status ;;
env) print_env ;;
conf) [[ -f "$CONF_DIR/flink-conf.yaml" ]] || write_config; cat "$CONF_DIR/flink-conf.yaml" ;;
reset) with_lock flink-service stop; log "deleting $HOME_DIR"; rm -rf "$HOME_DIR" ;;
*) echo "usage: $0 install|start|stop|restart|status|env|conf|reset" >&2; exit 2 ;;
esac
