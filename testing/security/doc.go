// Package security is the least-privilege tier: bronze ingests from Kafka
// through a SASL_SSL listener (SCRAM-SHA-512, a CA made for the test) as a
// user whose ACLs allow only reading fintech.debt.raw, writes MinIO as a
// user whose policy allows only the warehouse bucket, and keeps its catalog
// in PostgreSQL as a role that is no superuser and owns only the catalog's
// tables. Every record must land once; and each of those identities is
// shown to be refused what it was not given.
//
//	go test -tags e2e -count=1 ./testing/security/
//
// The tests start what they need with testing/services (kafka.sh with
// KAFKA_SECURE=1, minio.sh, postgres.sh) and stop what they started.
package security
