#!/usr/bin/env bash
# Regenerates the operators' CustomResourceDefinitions vendored in this
# folder, from pinned releases only:
#   Strimzi 1.2.0          io.strimzi:api + io.strimzi:crd-generator (Maven Central),
#                          generated with the Temurin 25 JDK (the api jar holds no YAML)
#   Flink operator 1.10.0  org.apache.flink:flink-kubernetes-operator-api (Maven Central),
#                          META-INF/fabric8/*-v1.yml
#   Flink operator 1.7.0   the same jar of the release that runs here (the newest operator on
#                          Maven Central): k8s/operators/flink/crd-flinkdeployments.yaml,
#                          the CRD k8s/operators/flink installs; the FlinkDeployment must be
#                          valid under both
#   prometheus-operator    Go module v0.85.0, example/prometheus-operator-crd/
#   Argo CD                Go module github.com/argoproj/argo-cd/v3 v3.6.1, manifests/crds/
#   External Secrets       Go module v1.3.2, config/crds/bases/
# Only the CRDs of the kinds the manifests use are kept. The unit tier
# (k8s/schema_test.go) validates every custom resource against them.
#
# Needs the network (Maven Central, the Go module proxy): run it outside any
# network namespace. It rewrites k8s/crds/*.yaml; `git diff` shows what moved.
set -euo pipefail
cd "$(dirname "$0")"
out=$PWD

STRIMZI=1.2.0
FLINK_OPERATOR=1.10.0
FLINK_OPERATOR_RUN=1.7.0
PROMETHEUS_OPERATOR=v0.85.0
ARGOCD=v3.6.1
EXTERNAL_SECRETS=v1.3.2
JAVA_HOME=${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}
GOPROXY_URL=${GOPROXY_URL:-https://proxy.golang.org}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf '[crds] %s\n' "$*"; }

# keep FILE DEST: copy one upstream CRD, with a header naming where it came from.
keep() {
  { printf '# Vendored by k8s/crds/regen.sh from %s. Do not edit.\n' "$2"; cat "$1"; } >"$out/$3"
}

say "Strimzi $STRIMZI and Flink operator $FLINK_OPERATOR from Maven Central"
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>haade</groupId><artifactId>crds</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.strimzi</groupId><artifactId>api</artifactId><version>$STRIMZI</version></dependency>
    <dependency><groupId>io.strimzi</groupId><artifactId>crd-generator</artifactId><version>$STRIMZI</version></dependency>
    <dependency><groupId>org.apache.flink</groupId><artifactId>flink-kubernetes-operator-api</artifactId><version>$FLINK_OPERATOR</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
  </dependencies>
</project>
POM
cat >"$work/pom-run.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>haade</groupId><artifactId>crds-run</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.flink</groupId><artifactId>flink-kubernetes-operator-api</artifactId><version>$FLINK_OPERATOR_RUN</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
  </dependencies>
</project>
POM
(cd "$work" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib)
(cd "$work" && mvn -q -B -f pom-run.xml dependency:copy-dependencies -DoutputDirectory=lib-run)
mkdir -p "$work/strimzi"
"$JAVA_HOME/bin/java" -cp "$work/lib/*" io.strimzi.crdgenerator.CrdGenerator \
  --yaml --crd-api-version v1 --api-versions v1 --storage-version v1 \
  --label strimzi.io/crd-install:true \
  io.strimzi.api.kafka.model.kafka.Kafka="$work/strimzi/kafkas.yaml" \
  io.strimzi.api.kafka.model.nodepool.KafkaNodePool="$work/strimzi/kafkanodepools.yaml" \
  io.strimzi.api.kafka.model.topic.KafkaTopic="$work/strimzi/kafkatopics.yaml" \
  io.strimzi.api.kafka.model.user.KafkaUser="$work/strimzi/kafkausers.yaml"
for f in kafkas kafkanodepools kafkatopics kafkausers; do
  keep "$work/strimzi/$f.yaml" "io.strimzi:api:$STRIMZI (io.strimzi:crd-generator:$STRIMZI)" "strimzi-$f.yaml"
done
(cd "$work" && unzip -q -o "lib/flink-kubernetes-operator-api-$FLINK_OPERATOR.jar" 'META-INF/fabric8/*')
keep "$work/META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml" \
  "org.apache.flink:flink-kubernetes-operator-api:$FLINK_OPERATOR META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml" \
  flink-flinkdeployments.yaml
mkdir -p "$work/run"
(cd "$work/run" && unzip -q -o "../lib-run/flink-kubernetes-operator-api-$FLINK_OPERATOR_RUN.jar" 'META-INF/fabric8/*')
keep "$work/run/META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml" \
  "org.apache.flink:flink-kubernetes-operator-api:$FLINK_OPERATOR_RUN META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml" \
  ../operators/flink/crd-flinkdeployments.yaml
keep "$work/run/META-INF/fabric8/flinksessionjobs.flink.apache.org-v1.yml" \
  "org.apache.flink:flink-kubernetes-operator-api:$FLINK_OPERATOR_RUN META-INF/fabric8/flinksessionjobs.flink.apache.org-v1.yml" \
  ../operators/flink/crd-flinksessionjobs.yaml

# gomod MODULE VERSION: unpack a module zip from the Go module proxy into
# $work/MODULE@VERSION. Fetched directly, not with `go mod download`: Argo
# CD 3.6 declares go 1.27, which a Go 1.26 toolchain refuses to download.
gomod() {
  local esc
  esc=$(printf '%s' "$1" | sed 's/[A-Z]/!\L&/g')
  curl -sSfL -o "$work/mod.zip" "$GOPROXY_URL/$esc/@v/$2.zip"
  (cd "$work" && unzip -q -o mod.zip && rm mod.zip)
  echo "$work/$1@$2"
}

say "prometheus-operator $PROMETHEUS_OPERATOR"
d=$(gomod github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR")
for k in podmonitors servicemonitors prometheusrules prometheuses probes; do
  keep "$d/example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml" \
    "github.com/prometheus-operator/prometheus-operator $PROMETHEUS_OPERATOR example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml" \
    "prometheus-$k.yaml"
done

say "Argo CD $ARGOCD"
d=$(gomod github.com/argoproj/argo-cd/v3 "$ARGOCD")
for k in application appproject; do
  keep "$d/manifests/crds/$k-crd.yaml" "github.com/argoproj/argo-cd/v3 $ARGOCD manifests/crds/$k-crd.yaml" "argocd-$k.yaml"
done

say "External Secrets $EXTERNAL_SECRETS"
d=$(gomod github.com/external-secrets/external-secrets "$EXTERNAL_SECRETS")
keep "$d/config/crds/bases/external-secrets.io_externalsecrets.yaml" \
  "github.com/external-secrets/external-secrets $EXTERNAL_SECRETS config/crds/bases/external-secrets.io_externalsecrets.yaml" \
  external-secrets-externalsecrets.yaml

say "wrote $(ls "$out"/*.yaml | wc -l) CRDs into k8s/crds/"
