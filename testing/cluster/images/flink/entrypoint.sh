#!/bin/bash
# jobmanager | taskmanager: runs that Flink process in the foreground.
# FLINK_CONF_SOURCE: a directory holding config.yaml (a ConfigMap mount);
# FLINK_PROPERTIES: extra "key: value" lines, appended (as the public image).
set -euo pipefail
mkdir -p "$FLINK_CONF_DIR" "$FLINK_LOG_DIR"
cp "$FLINK_HOME"/conf/log4j-console.properties "$FLINK_CONF_DIR/"
if [[ -n "${FLINK_CONF_SOURCE:-}" ]]; then
  cp "$FLINK_CONF_SOURCE/config.yaml" "$FLINK_CONF_DIR/config.yaml"
else
  cp "$FLINK_HOME/conf/config.yaml" "$FLINK_CONF_DIR/config.yaml"
fi
[[ -z "${FLINK_PROPERTIES:-}" ]] || printf '%s\n' "$FLINK_PROPERTIES" >>"$FLINK_CONF_DIR/config.yaml"
case "${1:-}" in
jobmanager) exec "$FLINK_HOME/bin/jobmanager.sh" start-foreground ;;
taskmanager) exec "$FLINK_HOME/bin/taskmanager.sh" start-foreground ;;
*) echo "usage: entrypoint.sh jobmanager|taskmanager" >&2; exit 2 ;;
esac
