package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func TestRegistryFlags(t *testing.T) {
	env := func(string) string { return "" }
	tests := []struct {
		name string
		args []string
		want string // the start of the error; "" for none
	}{
		{"none", nil, ""},
		{"validate without a registry", []string{"--validate-schema"}, "--validate-schema: "},
		{"not a URL", []string{"--schema-registry=localhost:8081"}, "--schema-registry="},
		{"credentials in the URL", []string{"--schema-registry=http://u:topsecret@127.0.0.1:8091"}, "--schema-registry=http://u:xxxxx@127.0.0.1:8091: the URL must not hold credentials"},
		{"good", []string{"--schema-registry=http://127.0.0.1:8091/apis/ccompat/v7", "--validate-schema"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseArgs(tc.args, env)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("parseArgs(%q) = %v", tc.args, err)
				}
				if cfg.Registry.URL != "" && cfg.Registry.Subject != "fintech.debt.raw-value" {
					t.Errorf("subject = %q, want fintech.debt.raw-value", cfg.Registry.Subject)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("parseArgs(%q) = %v, want an error starting %q", tc.args, err, tc.want)
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Fatalf("the error holds the password: %v", err)
			}
		})
	}
}

// TestBronzeWithRegistry runs the whole pipeline on an in-process Kafka and
// a fake registry: plain JSON and wire-format events, one violation.
func TestBronzeWithRegistry(t *testing.T) {
	text, err := os.ReadFile("../../schemas/fintech.debt.raw-value.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := srfake.New()
	t.Cleanup(reg.Close)
	reg.SeedSchema("fintech.debt.raw-value", 1, 3, sr.Schema{Schema: string(text), Type: sr.TypeJSON})
	t.Setenv(registryio.EnvPassword, "")

	e := newEnv(t, 2)
	e.cfg.Registry = registryio.Config{URL: reg.URL(), Subject: "fintech.debt.raw-value", Validate: true}.WithPassword("reg-secret-pw")
	good := `{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`
	violation := append(registryio.AppendWire(nil, 3), `{"source": "", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`...)
	e.produce([][]byte{[]byte(good), append(registryio.AppendWire(nil, 3), good...), violation})
	if err := e.runBronze(); err != nil {
		t.Fatal(err)
	}
	evs, dls := e.tables()
	if len(evs) != 2 {
		t.Errorf("%d rows, want 2", len(evs))
	}
	var got []string
	for _, d := range dls {
		got = append(got, d.Error)
		if !bytes.Equal(d.Payload, violation) {
			t.Errorf("dead letter payload %q, want the record's bytes %q", d.Payload, violation)
		}
	}
	want := []string{"schema: schema id 3: /source minLength: minLength: got 0, want 1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("dead letters (-want +got):\n%s", d)
	}

	// The DoFn carries the URL, never the password.
	p, s := beam.NewPipelineWithRoot()
	if _, err := bronze.Build(context.Background(), s, e.cfg); err != nil {
		t.Fatal(err)
	}
	b := serialized(t, p)
	if !bytes.Contains(b, []byte(reg.URL())) {
		t.Errorf("the serialized pipeline lacks the registry URL")
	}
	if bytes.Contains(b, []byte("reg-secret-pw")) {
		t.Errorf("the serialized pipeline holds the registry password")
	}
}
