// Package analytics is the end-to-end tier of the analytics stack: Trino and
// Apache Superset in front of the tables that bronze, silver and gold write
// on real Kafka, MinIO and PostgreSQL. Its tests carry the build tag e2e and
// start what they need through testing/services (trino.sh, superset.sh and
// the others):
//
//	go test -tags e2e -count=1 -timeout 40m ./testing/analytics/
//
// They ask Trino over its HTTP protocol (POST /v1/statement, then follow
// nextUri), with the small client in trino_test.go, so that nothing but the
// standard library stands between a test and the server's own answers.
package analytics
