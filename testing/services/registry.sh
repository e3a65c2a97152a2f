#!/usr/bin/env bash
# A Confluent-compatible schema registry for the end-to-end tier: Apicurio Registry 2.4.2.Final,
# in-memory (H2) storage, its Confluent API at /apis/ccompat/v7.
#
#   registry.sh install   build the runnable registry from Maven Central into the cache (once)
#   registry.sh start     install if needed, start, wait until it answers /health/ready
#   registry.sh stop      stop it (the in-memory schemas are gone)
#   registry.sh restart   stop, then start (outage tests: ids are assigned anew)
#   registry.sh status    exit 0 when running and ready, 3 when stopped
#   registry.sh url       print the Confluent-compatible base URL
#
# Listens on 127.0.0.1:${REGISTRY_PORT:-8091}, no authentication (8091: outside the 8081-8089 that
# the Flink scripts take for their REST APIs).
#
# Why Apicurio 2.4.2.Final built here: Karapace is not on PyPI, Confluent's registry is not on
# Maven Central, and Apicurio publishes no runnable jar there (no -runner jar, no distribution).
# Of the Apicurio versions whose app module is served (3.3.3, 3.0.9, 2.6.13.Final, ...), 2.4.2.Final
# is the newest whose modules all resolve from Maven Central alone: 3.x's and 2.6's internal
# modules (schema-util-*, contracts-rules) are missing there. So registry/pom.xml augments
# io.apicurio:apicurio-registry-app with quarkus-maven-plugin's build goal, as Apicurio's own
# build does, swapping in two artifacts that are only published elsewhere (see the pom).
set -euo pipefail
SERVICE=registry
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

APICURIO_VERSION=2.4.2.Final # also in registry/pom.xml (a parent version cannot be a property)
REGISTRY_HOST=127.0.0.1
REGISTRY_PORT="${REGISTRY_PORT:-8091}"
REGISTRY_HEAP="${REGISTRY_HEAP:--Xmx384m -Xms64m}"
START_TIMEOUT="${REGISTRY_START_TIMEOUT:-120}"
BUILD_DIR="$HAADE_CACHE/registry/$APICURIO_VERSION"
RUNNER="$BUILD_DIR/target/haade-registry-$APICURIO_VERSION-runner.jar"
JAVA="${JAVA:-java}"
URL="http://$REGISTRY_HOST:$REGISTRY_PORT/apis/ccompat/v7"

build() {
	[[ -f "$BUILD_DIR/.complete" ]] && return 0
	log "building Apicurio Registry $APICURIO_VERSION with Maven into $BUILD_DIR (once)"
	command -v mvn >/dev/null || die "mvn is not installed (apt-get install -y maven)"
	rm -rf "$BUILD_DIR"
	mkdir -p "$BUILD_DIR"
	cp "$SERVICES_DIR/registry/pom.xml" "$BUILD_DIR/pom.xml"
	# The parent's build runs checkstyle, javadoc and signing for Apicurio's own modules: off.
	mvn_run "$LOG_DIR/registry-build.log" -f "$BUILD_DIR/pom.xml" -DskipExternalRepos -DskipTests \
		-Denforcer.skip -Dgpg.skip -Dcheckstyle.skip -Djacoco.skip -Dmaven.javadoc.skip -Dmaven.source.skip \
		-Dquarkus.index-dependency.registry.group-id=io.apicurio \
		-Dquarkus.index-dependency.registry.artifact-id=apicurio-registry-app \
		package
	[[ -f "$RUNNER" ]] || die "Maven did not build $RUNNER"
	touch "$BUILD_DIR/.complete"
}

install() {
	"$JAVA" -version >/dev/null 2>&1 || die "no java on PATH (Apicurio $APICURIO_VERSION needs Java 11+)"
	with_lock "registry-$APICURIO_VERSION" build
}

ready() { curl -fsS --max-time 5 "http://$REGISTRY_HOST:$REGISTRY_PORT/health/ready" >/dev/null; }

start() {
	install
	if is_running registry; then
		wait_until registry "$START_TIMEOUT" "GET /health/ready" ready
		log "already running (pid $(pid_of registry)) at $URL"
		return 0
	fi
	ensure_port_free registry "$REGISTRY_HOST" "$REGISTRY_PORT"
	log "starting Apicurio Registry $APICURIO_VERSION at $URL (in-memory storage)"
	# shellcheck disable=SC2086 # REGISTRY_HEAP holds several options
	spawn registry "$JAVA" $REGISTRY_HEAP -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
		-Dquarkus.profile=prod -Dquarkus.http.host="$REGISTRY_HOST" -Dquarkus.http.port="$REGISTRY_PORT" \
		-Dquarkus.log.category.\"io.apicurio\".level=INFO -Dquarkus.log.level=INFO \
		-jar "$RUNNER"
	wait_for_port registry "$REGISTRY_HOST" "$REGISTRY_PORT" "$START_TIMEOUT"
	wait_until registry "$START_TIMEOUT" "GET /health/ready" ready
	log "ready at $URL (pid $(pid_of registry))"
}

stop() { stop_pid registry 30; }

status() {
	if is_running registry && ready; then
		echo "registry: running (pid $(pid_of registry)) at $URL"
		return 0
	elif is_running registry; then
		echo "registry: process $(pid_of registry) alive but $URL does not answer"
		return 1
	fi
	echo "registry: stopped"
	return 3
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
install) install ;;
start) with_lock registry-service start ;;
stop) with_lock registry-service stop ;;
restart) with_lock registry-service stop; with_lock registry-service start ;;
status) status ;;
url) echo "$URL" ;;
*) echo "usage: $0 install|start|stop|restart|status|url" >&2; exit 2 ;;
esac
