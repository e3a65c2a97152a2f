package registryio

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// schemaText is the repository's schema of fintech.debt.raw-value.
func schemaText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../schemas/fintech.debt.raw-value.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWire(t *testing.T) {
	v := AppendWire(nil, 258)
	v = append(v, `{"a":1}`...)
	if want := []byte{0, 0, 0, 1, 2}; string(v[:5]) != string(want) {
		t.Fatalf("header = %v, want %v", v[:5], want)
	}
	id, p, wire, err := DecodeWire(v)
	if err != nil || !wire || id != 258 || string(p) != `{"a":1}` {
		t.Fatalf("DecodeWire = %d %q %v %v", id, p, wire, err)
	}
	if _, p, wire, err := DecodeWire([]byte(`{"a":1}`)); err != nil || wire || string(p) != `{"a":1}` {
		t.Fatalf("plain JSON: %q %v %v", p, wire, err)
	}
	if _, _, wire, err := DecodeWire([]byte{0, 0, 1}); !wire || !errors.Is(err, ErrBadHeader) {
		t.Fatalf("short header: wire %v err %v, want ErrBadHeader", wire, err)
	}
}

func TestCheckNamesTheRule(t *testing.T) {
	s, err := Compile(1, schemaText(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, event, want string
	}{
		{"good", `{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`, ""},
		{"good with extras", `{"source": "news", "title": "t", "timestamp": "2026-05-19T10:00:00Z", "region": "eu", "n": [1]}`, ""},
		{"title a number", `{"source": "news", "title": 42, "timestamp": "2026-05-19T10:00:00Z"}`, "/title type: got number, want null or string"},
		{"no title", `{"source": "news", "timestamp": "2026-05-19T10:00:00Z"}`, "/ required: missing property 'title'"},
		{"empty source", `{"source": "", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`, "/source minLength: "},
		{"timestamp not a date-time", `{"source": "news", "title": "t", "timestamp": "yesterday"}`, "/timestamp format: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Check([]byte(tc.event))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want a reason starting %q", err, tc.want)
			}
		})
	}
}

func TestResolverCachesIDs(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	reg.SeedSchema("fintech.debt.raw-value", 1, 7, sr.Schema{Schema: schemaText(t), Type: sr.TypeJSON})
	reg.SeedSchema("other-value", 1, 8, sr.Schema{Schema: `{"type":"record","name":"R","fields":[]}`, Type: sr.TypeAvro})
	var calls atomic.Int64
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool { calls.Add(1); return false })
	res, err := NewResolver(Config{URL: reg.URL(), Subject: "fintech.debt.raw-value"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		s, err := res.ByID(ctx, 7)
		if err != nil || s.ID != 7 {
			t.Fatalf("ByID(7) = %v, %v", s, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("3 lookups of id 7 made %d requests, want 1 (cached)", n)
	}
	if _, err := res.ByID(ctx, 8); !errors.Is(err, ErrNotJSONSchema) {
		t.Errorf("ByID(8) of an Avro schema = %v, want ErrNotJSONSchema", err)
	}
	l, err := res.Latest(ctx)
	if err != nil || l.ID != 7 {
		t.Fatalf("Latest = %v, %v", l, err)
	}
}

func TestResolverWaitsForTheRegistry(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	reg.SeedSchema("fintech.debt.raw-value", 1, 7, sr.Schema{Schema: schemaText(t), Type: sr.TypeJSON})
	var fails atomic.Int64
	fails.Store(4)
	reg.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if fails.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	res, err := NewResolver(Config{URL: reg.URL(), Subject: "s", Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	res.sleep = func(context.Context, time.Duration) error { return nil }
	if s, err := res.ByID(context.Background(), 7); err != nil || s.ID != 7 {
		t.Fatalf("ByID after 4 failures = %v, %v; want schema 7", s, err)
	}

	// Unknown for longer than Wait: a loud error, ErrUnknownSchema.
	res2, _ := NewResolver(Config{URL: reg.URL(), Subject: "s", Wait: 300 * time.Millisecond})
	if _, err := res2.ByID(context.Background(), 99); !errors.Is(err, ErrUnknownSchema) || !errors.Is(err, ErrRegistry) {
		t.Fatalf("ByID(99) = %v, want ErrUnknownSchema wrapping ErrRegistry", err)
	}

	// An id registered while the lookup waits is found: the registry
	// gets it once the lookup has been told twice that it is unknown.
	var asked atomic.Int64
	reg.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/schemas/ids/9" && asked.Add(1) == 3 {
			reg.SeedSchema("fintech.debt.raw-value", 2, 9, sr.Schema{Schema: schemaText(t), Type: sr.TypeJSON})
		}
		return false
	})
	res3, _ := NewResolver(Config{URL: reg.URL(), Subject: "s", Wait: time.Minute})
	if s, err := res3.ByID(context.Background(), 9); err != nil || s.ID != 9 {
		t.Fatalf("ByID(9) registered late = %v, %v", s, err)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("the lookup of id 9 asked %d times, want 3: twice unknown, then found", n)
	}
}

func TestResolverFailsAtOnceOnBadCredentials(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Basic " + "aGFhZGU6cmlnaHQ=")) // haade:right
	defer reg.Close()
	reg.SeedSchema("s", 1, 7, sr.Schema{Schema: schemaText(t), Type: sr.TypeJSON})
	res, err := NewResolver(Config{URL: reg.URL(), Subject: "s", User: "haade", Wait: time.Hour}.WithPassword("wrong-secret"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = res.ByID(context.Background(), 7)
	if !errors.Is(err, ErrRegistry) || time.Since(start) > 5*time.Second {
		t.Fatalf("ByID with a wrong password = %v after %v, want ErrRegistry at once", err, time.Since(start))
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("the error holds the password: %v", err)
	}
	good, _ := NewResolver(Config{URL: reg.URL(), Subject: "s", User: "haade"}.WithPassword("right"))
	if _, err := good.ByID(context.Background(), 7); err != nil {
		t.Fatalf("ByID with the right password: %v", err)
	}
}

func TestConfigNeverSerializesThePassword(t *testing.T) {
	t.Setenv(EnvPassword, "")
	c := Config{URL: "http://127.0.0.1:8091/apis/ccompat/v7", User: "u", Subject: "s"}.WithPassword("s3cret-pw")
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret-pw") {
		t.Fatalf("serialized config holds the password: %s", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if p, _ := back.password(); p != "" {
		t.Fatalf("serializing exported the password (%q): MarshalJSON must have no effect", p)
	}
	if got := os.Getenv(EnvPassword); got != "" {
		t.Fatalf("serializing set %s", EnvPassword)
	}
	// Events, which puts the config into its DoFn, exports it: a worker in
	// this process finds it, and the environment does not change.
	t.Cleanup(func() { secret.Forget(EnvPassword) })
	_, s := beam.NewPipelineWithRoot()
	Events(s, beam.Create(s, offsets.Batch{}), c)
	if p, _ := back.password(); p != "s3cret-pw" {
		t.Fatalf("worker password = %q, want it exported by Events", p)
	}
	if got := os.Getenv(EnvPassword); got != "" {
		t.Fatalf("Events set %s", EnvPassword)
	}
	if err := (Config{URL: "http://u:pw@127.0.0.1:8091", Subject: "s"}).Check(); err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("Check of a URL with credentials = %v, want an error without them", err)
	}
}

func TestNewMembers(t *testing.T) {
	v1 := schemaText(t)
	v2 := `{"type": "object",
	  "properties": {
	    "source": {"type": "string"}, "title": {"type": "string"}, "timestamp": {"type": "string", "format": "date-time"},
	    "region": {"type": "string"},
	    "amount": {"type": ["number", "null"]},
	    "count": {"type": "integer"},
	    "settled": {"type": "boolean"},
	    "settled_at": {"type": "string", "format": "date-time"},
	    "tags": {"type": "array"},
	    "desk": {"type": "string"}
	  },
	  "required": ["source", "title", "timestamp", "desk"]}`
	got, err := NewMembers(v1, v2)
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{
		{Name: "amount", JSONType: "number", Type: iceberg.PrimitiveTypes.Float64},
		{Name: "count", JSONType: "integer", Type: iceberg.PrimitiveTypes.Int64},
		{Name: "region", JSONType: "string", Type: iceberg.PrimitiveTypes.String},
		{Name: "settled", JSONType: "boolean", Type: iceberg.PrimitiveTypes.Bool},
		{Name: "settled_at", JSONType: "string/date-time", Type: iceberg.PrimitiveTypes.TimestampTz},
		{Name: "tags", JSONType: "array", Note: "array has no column type: stays in extra"},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b iceberg.Type) bool {
		return (a == nil) == (b == nil) && (a == nil || a.Equals(b))
	})); d != "" {
		t.Fatalf("NewMembers (-want +got):\n%s", d)
	}
	var promote []string
	for _, m := range got {
		if p := m.Promote(); p != "" {
			promote = append(promote, p)
		}
	}
	if d := cmp.Diff([]string{"amount:double", "count:long", "region:string", "settled:boolean", "settled_at:timestamptz"}, promote); d != "" {
		t.Fatalf("Promote (-want +got):\n%s", d)
	}
}

func TestNewMembersBetween(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	reg.SeedSchema("s", 1, 1, sr.Schema{Schema: schemaText(t), Type: sr.TypeJSON})
	reg.SeedSchema("s", 2, 2, sr.Schema{Schema: `{"type":"object","properties":{"region":{"type":"string"}}}`, Type: sr.TypeJSON})
	res, _ := NewResolver(Config{URL: reg.URL(), Subject: "s"})
	got, err := NewMembersBetween(context.Background(), res, "s", 1, -1)
	if err != nil || len(got) != 1 || got[0].Promote() != "region:string" {
		t.Fatalf("NewMembersBetween = %+v, %v; want region:string", got, err)
	}
}
