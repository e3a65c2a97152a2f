//go:build e2e

package security

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

// kafkaTLS trusts only the test CA that kafka.sh made.
func kafkaTLS(t *testing.T, caFile string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("the Kafka test CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
