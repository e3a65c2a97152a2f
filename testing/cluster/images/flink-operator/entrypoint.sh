#!/bin/bash
# operator: runs org.apache.flink.kubernetes.operator.FlinkOperator in the foreground, as the
# public image's entrypoint does: the configuration directory is FLINK_CONF_DIR, the log
# configuration LOG_CONFIG (a -Dlog4j.configurationFile=... flag), JVM flags JVM_ARGS.
# The webhook is not part of this image (the deployment runs without it).
set -euo pipefail
case "${1:-}" in
operator)
  # shellcheck disable=SC2086 # JVM_ARGS and LOG_CONFIG are lists of flags
  exec java ${JVM_ARGS:-} ${LOG_CONFIG:-} -cp '/opt/flink-kubernetes-operator/lib/*' \
    org.apache.flink.kubernetes.operator.FlinkOperator
  ;;
*) echo "usage: /docker-entrypoint.sh operator" >&2; exit 2 ;;
esac
