package kafkaio

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
	"github.com/twmb/franz-go/pkg/kfake"
)

// pki is a CA and a server certificate for 127.0.0.1 signed by it, as
// files, plus a client certificate and a key that does not match it.
type pki struct {
	caFile, certFile, keyFile, otherKeyFile string
	server                                  tls.Certificate
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := func() (*ecdsa.PrivateKey, []byte) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return k, der
	}
	now := time.Now()
	caKey, _ := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "haade test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, leafKeyDER := key()
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	_, otherDER := key()
	p := pki{
		caFile:       write("ca.pem", "CERTIFICATE", caDER),
		certFile:     write("cert.pem", "CERTIFICATE", leafDER),
		keyFile:      write("key.pem", "EC PRIVATE KEY", leafKeyDER),
		otherKeyFile: write("other-key.pem", "EC PRIVATE KEY", otherDER),
	}
	p.server, err = tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigValidate(t *testing.T) {
	p := newPKI(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := Config{Brokers: []string{"kafka-0:9092", "10.0.0.1:9093"}, Topic: "t"}
	with := func(f func(*Config)) Config {
		c := ok
		f(&c)
		return c
	}
	tests := []struct {
		name  string
		cfg   Config
		valid bool
	}{
		{"minimal", ok, true},
		{"no brokers", with(func(c *Config) { c.Brokers = nil }), false},
		{"empty broker", with(func(c *Config) { c.Brokers = []string{""} }), false},
		{"broker without port", with(func(c *Config) { c.Brokers = []string{"kafka-0"} }), false},
		{"broker as URL", with(func(c *Config) { c.Brokers = []string{"kafka://kafka-0:9092"} }), false},
		{"broker with a space", with(func(c *Config) { c.Brokers = []string{"kafka-0:9092 kafka-1:9092"} }), false},
		{"no topic", with(func(c *Config) { c.Topic = "" }), false},

		{"SASL PLAIN", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "PLAIN", "u" }), true},
		{"SASL plain, lower case", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "plain", "u" }), true},
		{"SASL SCRAM-SHA-256", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "SCRAM-SHA-256", "u" }), true},
		{"SASL SCRAM-SHA-512", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "SCRAM-SHA-512", "u" }), true},
		{"SASL without a user", with(func(c *Config) { c.SASLMechanism = "PLAIN" }), false},
		{"SASL GSSAPI", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "GSSAPI", "u" }), false},
		{"SASL OAUTHBEARER", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "OAUTHBEARER", "u" }), false},
		{"SASL SCRAM-SHA-1", with(func(c *Config) { c.SASLMechanism, c.SASLUser = "SCRAM-SHA-1", "u" }), false},

		{"TLS, system roots", with(func(c *Config) { c.TLS = true }), true},
		{"TLS CA file", with(func(c *Config) { c.TLS, c.TLSCAFile = true, p.caFile }), true},
		{"TLS CA file turns TLS on", with(func(c *Config) { c.TLSCAFile = p.caFile }), true},
		{"TLS CA file missing", with(func(c *Config) { c.TLS, c.TLSCAFile = true, p.caFile+".missing" }), false},
		{"TLS CA file without a certificate", with(func(c *Config) { c.TLS, c.TLSCAFile = true, garbage }), false},
		{"TLS client certificate", with(func(c *Config) { c.TLS, c.TLSCertFile, c.TLSKeyFile = true, p.certFile, p.keyFile }), true},
		{"TLS client certificate without a key", with(func(c *Config) { c.TLS, c.TLSCertFile = true, p.certFile }), false},
		{"TLS key without a certificate", with(func(c *Config) { c.TLS, c.TLSKeyFile = true, p.keyFile }), false},
		{"TLS key that does not match", with(func(c *Config) { c.TLS, c.TLSCertFile, c.TLSKeyFile = true, p.certFile, p.otherKeyFile }), false},
		{"TLS certificate file missing", with(func(c *Config) { c.TLS, c.TLSCertFile, c.TLSKeyFile = true, p.certFile+".missing", p.keyFile }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.valid && err != nil {
				t.Fatalf("Validate = %v, want nil", err)
			}
			if !tc.valid && !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate = %v, want ErrConfig", err)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	if got := (Config{}).withDefaults().CallDuration; got != 250*time.Millisecond {
		t.Errorf("default CallDuration = %v, want 250ms", got)
	}
	got := Config{CallDuration: time.Minute}.withDefaults()
	if got.BatchSize != 4096 || got.CallDuration != time.Second || got.IdleWait != 100*time.Millisecond || got.FetchMaxPartitionBytes != 512<<10 {
		t.Errorf("withDefaults = %+v", got)
	}
	set := Config{BatchSize: 10, CallDuration: 300 * time.Millisecond, IdleWait: time.Second, FetchMaxPartitionBytes: 1}.withDefaults()
	if set.BatchSize != 10 || set.CallDuration != 300*time.Millisecond || set.IdleWait != time.Second || set.FetchMaxPartitionBytes != 1 {
		t.Errorf("withDefaults changed set fields: %+v", set)
	}
}

// TestClientOptionsConnect plans reads against in-process brokers that
// require SASL or TLS: the options ClientOptions builds must connect, and
// wrong credentials must not.
func TestClientOptionsConnect(t *testing.T) {
	p := newPKI(t)
	start := func(t *testing.T, opts ...kfake.Opt) []string {
		t.Helper()
		c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(2, topic)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.ListenAddrs()
	}
	sasl := start(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", "pw-a"),
		kfake.Superuser("SCRAM-SHA-256", "bob", "pw-b"), kfake.Superuser("SCRAM-SHA-512", "carol", "pw-c"))
	tlsBrokers := start(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{p.server}, MinVersion: tls.VersionTLS12}))

	tests := []struct {
		name    string
		cfg     Config
		env     string // HAADE_SASL_PASSWORD
		connect bool
	}{
		{"PLAIN", Config{Brokers: sasl, SASLMechanism: "PLAIN", SASLUser: "alice", SASLPassword: "pw-a"}, "", true},
		{"SCRAM-SHA-256", Config{Brokers: sasl, SASLMechanism: "SCRAM-SHA-256", SASLUser: "bob", SASLPassword: "pw-b"}, "", true},
		{"SCRAM-SHA-512, password from the environment", Config{Brokers: sasl, SASLMechanism: "scram-sha-512", SASLUser: "carol"}, "pw-c", true},
		{"the password field wins over the environment", Config{Brokers: sasl, SASLMechanism: "PLAIN", SASLUser: "alice", SASLPassword: "pw-a"}, "wrong", true},
		{"wrong password", Config{Brokers: sasl, SASLMechanism: "PLAIN", SASLUser: "alice", SASLPassword: "nope"}, "", false},
		{"wrong mechanism for the user", Config{Brokers: sasl, SASLMechanism: "SCRAM-SHA-256", SASLUser: "carol", SASLPassword: "pw-c"}, "", false},
		{"no SASL", Config{Brokers: sasl}, "", false},
		{"TLS with the CA file", Config{Brokers: tlsBrokers, TLS: true, TLSCAFile: p.caFile}, "", true},
		{"TLS with a client certificate", Config{Brokers: tlsBrokers, TLSCAFile: p.caFile, TLSCertFile: p.certFile, TLSKeyFile: p.keyFile}, "", true},
		{"TLS skipping verification", Config{Brokers: tlsBrokers, TLS: true, TLSInsecureSkipVerify: true}, "", true},
		{"TLS without the CA", Config{Brokers: tlsBrokers, TLS: true}, "", false},
		{"plaintext to a TLS broker", Config{Brokers: tlsBrokers}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HAADE_SASL_PASSWORD", tc.env)
			t.Setenv(EnvSASLPassword, "")
			cfg := tc.cfg
			cfg.Topic = topic
			src, err := planOnce(context.Background(), cfg, PlanOpts{Bounded: true}, 3*time.Second)
			if tc.connect && (err != nil || len(src.Partitions) != 2) {
				t.Fatalf("Plan = %+v, %v; want 2 partitions", src, err)
			}
			if !tc.connect && err == nil {
				t.Fatalf("Plan = %+v; want an error", src)
			}
		})
	}
}

// TestClientLogsReachSlog: while the brokers are away, a read's franz-go
// warnings go to the process's slog logger, tagged component=franz-go, and
// its info lines do not.
func TestClientLogsReachSlog(t *testing.T) {
	var buf cmdtest.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Topic: "events"}
	c, err := takeConsumer("logs", cfg, 0, from(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	c.cl.PollRecords(ctx, 10)
	cancel()
	closeConsumer(c)
	out := buf.String()
	if !strings.Contains(out, "component=franz-go") || !strings.Contains(out, "level=WARN") {
		t.Fatalf("no franz-go warning in the log:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "component=franz-go") && (strings.Contains(line, "level=INFO") || strings.Contains(line, "level=DEBUG")) {
			t.Errorf("a franz-go line below warning: %s", line)
		}
	}
}
