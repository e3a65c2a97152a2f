package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
)

// k8sSecretEnv are the variables the Kubernetes pods set that name no flag:
// the workers read the secrets from them, never from a flag (docs/DESIGN.md,
// "Secrets").
var k8sSecretEnv = map[string]bool{
	icebergio.EnvCatalogPassword: true, icebergio.EnvCatalogPasswordFile: true,
	kafkaio.EnvSASLPasswordFile: true,
}

// k8sKafkaCA is where the pods mount the Kafka cluster CA (the Secret
// kafka-cluster-ca-cert), which HAADE_KAFKA_TLS_CA names.
const k8sKafkaCA = "/etc/haade/kafka-ca/ca.crt"

// testCAFile writes a self-signed CA certificate, PEM, standing in for the
// mounted cluster CA, and returns its path.
func testCAFile(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test cluster CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
