// Package flinke2e is the end-to-end test of bronze on a real Apache Flink: Beam's Flink job
// server with its embedded Flink (testing/services/flink.sh), real Kafka and MinIO. It carries
// the build tag e2e and starts the services it needs:
//
//	go test -tags e2e -p 1 -timeout 20m -run Flink ./testing/flinke2e/
//
// What works on Flink and what does not: testing/services/FLINK.md.
package flinke2e
