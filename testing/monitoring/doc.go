// Package monitoring runs HAADE's metrics and alert rules through a real
// Prometheus and the real Prometheus operator (issue 32):
// testing/monitoring/prometheus.sh builds both from the Go module proxy into
// $HAADE_CACHE, and
//
//   - TestPrometheusScrapesBronze runs that Prometheus against a streaming
//     bronze with the rules of k8s/monitoring, outside any cluster;
//
//   - TestOperatorReconcilesHaade runs the operator against a real
//     kube-apiserver (testing/cluster/apiserver.sh; no kubelet) on
//     k8s/operators/prometheus, k8s/base's PodMonitors and k8s/monitoring's
//     PrometheusRules, and reads the StatefulSet, scrape configuration and
//     rule files it makes.
//
//     testing/monitoring/prometheus.sh install
//     testing/cluster/apiserver.sh install    # for the operator's test
//     go test -tags monitoring -count=1 -v -timeout 20m ./testing/monitoring/
//
// On the node of testing/cluster, testing/k8se2e runs the same operator and
// Prometheus as pods and asserts the series, alerts and dashboard from there
// (.ci/cluster); these two tests, which need no node, are not in .ci/run.
//
// The tests listen on loopback ports: run them inside a network namespace of
// their own when other things listen on this machine (nsenter --net=...).
// They are behind the build tag "monitoring"; without it the package is empty.
package monitoring
