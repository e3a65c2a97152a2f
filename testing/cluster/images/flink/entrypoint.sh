#!/bin/bash
# The Flink image's entrypoint, also at /docker-entrypoint.sh (the path the Flink Kubernetes
# operator's native mode runs, kubernetes.entry.path).
#
#   jobmanager | taskmanager   a standalone process in the foreground; its configuration is
#                              copied to /tmp/flink-conf from FLINK_CONF_SOURCE (a directory
#                              holding config.yaml) or the image's conf, then FLINK_PROPERTIES
#                              ("key: value" lines) appended, as the public image does
#   anything else              run as given, after the checks below: this is how the operator
#                              and Flink's native Kubernetes start the JobManager and the
#                              TaskManagers (bash -c "kubernetes-jobmanager.sh kubernetes-session
#                              ...", "kubernetes-taskmanager.sh ..."), with the configuration the
#                              operator mounts at $FLINK_HOME/conf
#
# ENABLE_BUILT_IN_PLUGINS: as in the public image, a ';'-separated list of plugin jars. This
# image carries its plugins installed already (the root file system may be read-only), so a
# name it does not carry is refused here, loudly, rather than failing later on an s3:// path.
set -euo pipefail
mkdir -p "$FLINK_LOG_DIR"
if [[ -n "${ENABLE_BUILT_IN_PLUGINS:-}" ]]; then
  IFS=';' read -ra wanted <<<"$ENABLE_BUILT_IN_PLUGINS"
  for jar in "${wanted[@]}"; do
    [[ -z "$jar" ]] && continue
    if ! compgen -G "$FLINK_HOME/plugins/*/$jar" >/dev/null; then
      echo "ENABLE_BUILT_IN_PLUGINS names $jar, which this image does not carry; it has: $(cd "$FLINK_HOME/plugins" && ls */*.jar | tr '\n' ' ')" >&2
      exit 2
    fi
  done
fi
case "${1:-}" in
jobmanager | taskmanager)
  export FLINK_CONF_DIR=/tmp/flink-conf
  mkdir -p "$FLINK_CONF_DIR"
  cp "$FLINK_HOME"/conf/log4j-console.properties "$FLINK_CONF_DIR/"
  if [[ -n "${FLINK_CONF_SOURCE:-}" ]]; then
    cp "$FLINK_CONF_SOURCE/config.yaml" "$FLINK_CONF_DIR/config.yaml"
  else
    cp "$FLINK_HOME/conf/config.yaml" "$FLINK_CONF_DIR/config.yaml"
  fi
  [[ -z "${FLINK_PROPERTIES:-}" ]] || printf '%s\n' "$FLINK_PROPERTIES" >>"$FLINK_CONF_DIR/config.yaml"
  exec "$FLINK_HOME/bin/$1.sh" start-foreground
  ;;
"") echo "usage: entrypoint.sh jobmanager|taskmanager|COMMAND..." >&2; exit 2 ;;
*) exec "$@" ;;
esac
