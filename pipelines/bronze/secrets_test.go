package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"testing"

	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/pipelines/bronze/bronze"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"google.golang.org/protobuf/proto"
)

// serialized returns the pipeline as the runner receives it.
func serialized(t *testing.T, p *beam.Pipeline) []byte {
	t.Helper()
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(pipe)
	if err != nil {
		t.Fatal(err)
	}
	// The Go SDK puts each DoFn, its fields as JSON, base64-encoded into
	// its ParDo payload: decode them too, so that the check reads what a
	// runner could read.
	for _, tr := range pipe.GetComponents().GetTransforms() {
		var pardo pipepb.ParDoPayload
		if proto.Unmarshal(tr.GetSpec().GetPayload(), &pardo) != nil || pardo.GetDoFn() == nil {
			continue
		}
		if dec, err := base64.StdEncoding.DecodeString(string(pardo.GetDoFn().GetPayload())); err == nil {
			b = append(b, dec...)
		}
	}
	return b
}

// No secret is in the pipeline that a run submits: not the SASL password,
// not the catalog's password. Workers read them from their environment.
func TestNoSecretInTheSerializedPipeline(t *testing.T) {
	const saslPassword, catalogPassword = "kafka-Secret-4711", "catalog-Secret-0815"
	t.Setenv(kafkaio.EnvSASLPassword, "")
	t.Setenv(icebergio.EnvCatalogPassword, "")
	os.Unsetenv(kafkaio.EnvSASLPassword)
	os.Unsetenv(icebergio.EnvCatalogPassword)
	// What earlier tests of this process exported is not this run's.
	secret.Forget(kafkaio.EnvSASLPassword)
	secret.Forget(icebergio.EnvCatalogPassword)
	t.Cleanup(func() { secret.Forget(kafkaio.EnvSASLPassword); secret.Forget(icebergio.EnvCatalogPassword) })

	// The whole bronze pipeline of a run against a broker that wants SASL.
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "fintech.debt.raw"),
		kfake.EnableSASL(), kfake.Superuser("PLAIN", "bronze", saslPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	e := newEnv(t, 1)
	e.cfg.Kafka.Brokers = c.ListenAddrs()
	e.cfg.Kafka.SASLMechanism, e.cfg.Kafka.SASLUser, e.cfg.Kafka.SASLPassword = "PLAIN", "bronze", saslPassword
	p, s := beam.NewPipelineWithRoot()
	if _, err := bronze.Build(context.Background(), s, e.cfg); err != nil {
		t.Fatal(err)
	}
	// A sink on a PostgreSQL catalog whose URI carries a password (its
	// construction needs no server).
	pg := icebergio.CatalogConfig{Type: "sql", Name: "local", URI: "postgres://bronze:" + catalogPassword + "@127.0.0.1:1/lakehouse?sslmode=disable", Warehouse: t.TempDir()}
	rows := beam.CreateList(s, []parse.EventBatch{{}})
	icebergio.Write(s, &icebergio.Sink{Catalog: pg, Table: tables.Bronze.As("lakehouse.pg"), Pipeline: "bronze"}, offsets.Offsets{}, rows)

	b := serialized(t, p)
	for _, secret := range []string{saslPassword, catalogPassword} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the serialized pipeline (%d bytes) holds the secret %q", len(b), secret)
		}
	}
	if !bytes.Contains(b, []byte("postgres://bronze@127.0.0.1:1/lakehouse")) {
		t.Errorf("the serialized pipeline lacks the catalog URI without its password")
	}
	// Serializing changed no environment variable: the building process
	// exported both passwords to its own workers, and to nothing else.
	for _, env := range []string{kafkaio.EnvSASLPassword, icebergio.EnvCatalogPassword} {
		if got, ok := os.LookupEnv(env); ok {
			t.Errorf("%s = %q after the pipeline was built and serialized, want it unset", env, got)
		}
	}
	for env, want := range map[string]string{kafkaio.EnvSASLPassword: saslPassword, icebergio.EnvCatalogPassword: catalogPassword} {
		if got, err := secret.FromEnv(env, env+"_FILE"); err != nil || got != want {
			t.Errorf("an in-process worker reads %s as %q (%v), want the exported password", env, got, err)
		}
	}
	// And a bronze run through the SASL broker works with the password known
	// only to its in-process workers.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(e.cfg.Kafka.Topic),
		kgo.SASL(plain.Auth{User: "bronze", Pass: saslPassword}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := 0; i < 200; i++ {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(`{"source":"news","title":"t","timestamp":"2026-05-19T10:00:00Z"}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	if evs, dls := e.tables(); len(evs)+len(dls) != 200 {
		t.Fatalf("%d rows through SASL, want 200", len(evs)+len(dls))
	}
}
