#!/bin/bash
# Formats the KRaft storage on first start, then runs the combined node.
#   KAFKA_NODE_ID (1), KAFKA_CLUSTER_ID (fixed dev id), KAFKA_ADVERTISED (host:9092)
#   KAFKA_CONF_EXTRA: a file of server properties appended (later keys win), e.g.
#   the listeners, TLS and authorizer (k8s/components/kafka-without-strimzi)
#   KAFKA_SCRAM_ADMIN: a user name; with KAFKA_SCRAM_ADMIN_PASSWORD_FILE (a mounted Secret's
#   key) or KAFKA_SCRAM_ADMIN_PASSWORD, formatting the storage also creates that user's
#   SCRAM-SHA-512 credentials (the first super user, who then creates the others over the
#   network). Kafka's storage tool takes the credential only as an argument: it is in that
#   one process's command line, inside the container, for the seconds the first format takes.
set -euo pipefail
id=${KAFKA_NODE_ID:-1}
cluster=${KAFKA_CLUSTER_ID:-haadedevclusterid00001}
adv=${KAFKA_ADVERTISED:-$(hostname):9092}
mkdir -p "$KAFKA_DATA/data" "$LOG_DIR"
conf=$KAFKA_DATA/server.properties
cat >"$conf" <<PROPS
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$id@localhost:9093
listeners=PLAIN://:9092,CONTROLLER://localhost:9093
advertised.listeners=PLAIN://$adv
listener.security.protocol.map=PLAIN:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAIN
controller.listener.names=CONTROLLER
log.dirs=$KAFKA_DATA/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
auto.create.topics.enable=false
PROPS
if [[ -n "${KAFKA_CONF_EXTRA:-}" ]]; then
  printf '\n# %s\n' "$KAFKA_CONF_EXTRA" >>"$conf"
  cat "$KAFKA_CONF_EXTRA" >>"$conf"
fi
java_opts=(${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m} -Djava.awt.headless=true -Dkafka.logs.dir="$LOG_DIR" -cp '/opt/kafka/libs/*')
scram=()
if [[ -n "${KAFKA_SCRAM_ADMIN:-}" ]]; then
  if [[ -n "${KAFKA_SCRAM_ADMIN_PASSWORD_FILE:-}" ]]; then
    KAFKA_SCRAM_ADMIN_PASSWORD=$(<"$KAFKA_SCRAM_ADMIN_PASSWORD_FILE")
  fi
  scram=(--add-scram "SCRAM-SHA-512=[name=$KAFKA_SCRAM_ADMIN,password=${KAFKA_SCRAM_ADMIN_PASSWORD:?KAFKA_SCRAM_ADMIN needs KAFKA_SCRAM_ADMIN_PASSWORD_FILE or KAFKA_SCRAM_ADMIN_PASSWORD}]")
fi
[[ -f $KAFKA_DATA/data/meta.properties ]] || java "${java_opts[@]}" kafka.tools.StorageTool format -t "$cluster" -c "$conf" "${scram[@]}"
exec java "${java_opts[@]}" kafka.Kafka "$conf"
