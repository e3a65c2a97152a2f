#!/usr/bin/env bash
# What Strimzi's cluster CA and User Operator would make, for the Kafka of this component:
#   kafka/recovery-kafka-cluster-ca-cert   ca.crt (the cluster CA's certificate)
#   kafka/recovery-kafka-broker-tls        tls.pem (the broker's key and certificate chain;
#                                          names: the bootstrap and brokers Services)
#   kafka/kafka-users                      admin, bronze, producer (SCRAM passwords)
#   lakehouse/kafka-cluster-ca-cert        ca.crt (what the TaskManagers and the submit
#                                          Job mount; with Strimzi, copied by hand)
#   lakehouse/bronze, lakehouse/producer   password (as the User Operator's user Secrets)
# Made once: a Secret that exists is left as it is, so a re-run rotates nothing. The CA's
# key is not kept (nothing else is signed by it). Passwords and keys never reach stdout.
#
#   secrets.sh            with kubectl and the current context
#   KUBECTL=... secrets.sh
# Needs openssl.
set -euo pipefail
KUBECTL=${KUBECTL:-kubectl}
kc() { "$KUBECTL" "$@"; }
exists() { kc -n "$1" get secret "$2" >/dev/null 2>&1; }

for ns in kafka lakehouse; do
  kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 700 "$work"

if ! exists kafka recovery-kafka-cluster-ca-cert || ! exists kafka recovery-kafka-broker-tls; then
  san="DNS:recovery-kafka-dual-role-0.recovery-kafka-kafka-brokers.kafka.svc.cluster.local"
  for s in recovery-kafka-kafka-bootstrap recovery-kafka-kafka-brokers; do
    san+=",DNS:$s,DNS:$s.kafka,DNS:$s.kafka.svc,DNS:$s.kafka.svc.cluster.local"
  done
  (
    cd "$work"
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 365 -subj "/O=io.haade/CN=cluster-ca" \
      -keyout ca.key -out ca.crt
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out broker.key
    openssl req -new -key broker.key -sha256 -subj "/O=io.haade/CN=recovery-kafka-kafka" -out broker.csr
    printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
      "$san" >broker.ext
    openssl x509 -req -sha256 -days 365 -in broker.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -extfile broker.ext -out broker.crt
    cat broker.key broker.crt ca.crt >tls.pem
  ) >"$work/openssl.log" 2>&1 || { cat "$work/openssl.log" >&2; echo "secrets.sh: openssl failed" >&2; exit 1; }
  kc -n kafka delete secret recovery-kafka-cluster-ca-cert recovery-kafka-broker-tls --ignore-not-found >/dev/null
  kc -n kafka create secret generic recovery-kafka-cluster-ca-cert --from-file=ca.crt="$work/ca.crt" >/dev/null
  kc -n kafka create secret generic recovery-kafka-broker-tls --from-file=tls.pem="$work/tls.pem" >/dev/null
  kc -n lakehouse delete secret kafka-cluster-ca-cert --ignore-not-found >/dev/null
  echo "secrets.sh: made the cluster CA and the broker's certificate"
fi
if ! exists lakehouse kafka-cluster-ca-cert; then
  kc -n kafka get secret recovery-kafka-cluster-ca-cert -o jsonpath='{.data.ca\.crt}' | base64 -d >"$work/ca-copy.crt"
  kc -n lakehouse create secret generic kafka-cluster-ca-cert --from-file=ca.crt="$work/ca-copy.crt" >/dev/null
  echo "secrets.sh: copied the cluster CA's certificate to lakehouse/kafka-cluster-ca-cert"
fi

if ! exists kafka kafka-users; then
  # No newline: a password is its file's whole content.
  for u in admin bronze producer; do openssl rand -hex 24 | tr -d '\n' >"$work/$u"; done
  kc -n kafka create secret generic kafka-users --from-file=admin="$work/admin" \
    --from-file=bronze="$work/bronze" --from-file=producer="$work/producer" >/dev/null
  echo "secrets.sh: made the SCRAM passwords of admin, bronze and producer"
fi
for u in bronze producer; do
  if ! exists lakehouse "$u"; then
    kc -n kafka get secret kafka-users -o jsonpath="{.data.$u}" | base64 -d >"$work/$u.copy"
    kc -n lakehouse create secret generic "$u" --from-file=password="$work/$u.copy" >/dev/null
    echo "secrets.sh: lakehouse/$u holds the password of the Kafka user $u"
  fi
done
