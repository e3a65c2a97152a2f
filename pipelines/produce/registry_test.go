package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func TestSchemaFlags(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--brokers=b:9092", "--wire-format"}, "--wire-format: needs --schema-registry"},
		{[]string{"--brokers=b:9092", "--register-schema=x.json"}, "--register-schema: needs --schema-registry"},
		{[]string{"--brokers=b:9092", "--schema-registry=http://127.0.0.1:1", "--register-schema=/no/such.json"}, "--register-schema=/no/such.json: "},
	} {
		_, err := parseArgs(tc.args, env)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestSetupSchemaRegistersAndLooksUp(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	cfg, err := parseArgs([]string{"--brokers=b:9092", "--schema-registry=" + reg.URL(),
		"--register-schema=../../schemas/fintech.debt.raw-value.json", "--wire-format"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	id, err := setupSchema(context.Background(), cfg.Schema, 10*time.Second)
	if err != nil || id <= 0 {
		t.Fatalf("setupSchema = %d, %v; want a schema id", id, err)
	}
	if _, ok := reg.GetSchema("fintech.debt.raw-value", 1); !ok {
		t.Fatal("the schema is not registered under fintech.debt.raw-value")
	}
	// Again: the same id, no new version.
	again, err := setupSchema(context.Background(), cfg.Schema, 10*time.Second)
	if err != nil || again != id {
		t.Fatalf("second setupSchema = %d, %v; want %d", again, err, id)
	}
	// Wire format without registering: the subject's latest id.
	cfg.Schema.RegisterFile = ""
	if got, err := setupSchema(context.Background(), cfg.Schema, 10*time.Second); err != nil || got != id {
		t.Fatalf("setupSchema without --register-schema = %d, %v; want %d", got, err, id)
	}
}

func TestProduceWireFormat(t *testing.T) {
	brokers := startKafka(t, 2)
	reg := srfake.New()
	defer reg.Close()
	code, stdout, stderr := runProduce(t, nil, "--brokers="+kafkatest.Addr(brokers), "--count=50",
		"--schema-registry="+reg.URL(), "--register-schema=../../schemas/fintech.debt.raw-value.json", "--wire-format")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := parseReport(t, stdout); r.sent != 50 {
		t.Fatalf("report %+v, want 50 sent", r)
	}
	s, ok := reg.GetSchema("fintech.debt.raw-value", 1)
	if !ok {
		t.Fatal("no schema registered")
	}
	for _, rec := range consume(t, brokers, topic, 50) {
		id, payload, wire, err := registryio.DecodeWire(rec.Value)
		if err != nil || !wire || id != s.ID {
			t.Fatalf("value %q: id %d wire %v err %v; want the wire format with id %d", rec.Value, id, wire, err, s.ID)
		}
		if _, err := event.Parse(payload); err != nil {
			t.Fatalf("payload %q does not parse: %v", payload, err)
		}
	}
}
