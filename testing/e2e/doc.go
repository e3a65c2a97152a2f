// Package e2e is the end-to-end tier: the bronze pipeline, built as a binary
// and run as a subprocess, against real Apache Kafka, MinIO and PostgreSQL,
// with its tables read back by Spark 3.5 and pyiceberg (testing/e2e/py) as
// well as by icebergio.ScanRows. Records are produced and read back with
// kcat, a standard Kafka client.
//
// The tests carry the build tag e2e and start the services they need with
// testing/services/*.sh (see testing/services/README.md). They stop and
// restart services, so run them one package at a time:
//
//	go test -tags e2e -p 1 -timeout 30m ./testing/e2e/
package e2e
