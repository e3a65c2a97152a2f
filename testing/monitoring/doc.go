// Package monitoring runs HAADE's metrics and alert rules through a real
// Prometheus (issue 32): testing/monitoring/prometheus.sh builds Prometheus
// and the Prometheus operator from the Go module proxy into $HAADE_CACHE, and
// TestPrometheusScrapesBronze runs that Prometheus against a streaming bronze
// with the rules of k8s/monitoring, outside any cluster.
//
//	testing/monitoring/prometheus.sh install
//	go test -tags monitoring -count=1 -v -timeout 20m ./testing/monitoring/
//
// The test listens on loopback ports: run it inside a network namespace of
// its own when other things listen on this machine (nsenter --net=...).
// It is behind the build tag "monitoring"; without it the package is empty.
package monitoring
