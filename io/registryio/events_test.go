package registryio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func TestMain(m *testing.M) { ptest.Main(m) }

const sampleEvent = `{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`

func wire(id int, v string) []byte { return append(registryio.AppendWire(nil, id), v...) }

// fakeRegistry serves the repository's schema as id 7 of
// fintech.debt.raw-value, and an Avro schema as id 8.
func fakeRegistry(t *testing.T) *srfake.Registry {
	t.Helper()
	text, err := os.ReadFile("../../schemas/fintech.debt.raw-value.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := srfake.New()
	t.Cleanup(reg.Close)
	reg.SeedSchema("fintech.debt.raw-value", 1, 7, sr.Schema{Schema: string(text), Type: sr.TypeJSON})
	reg.SeedSchema("avro-value", 1, 8, sr.Schema{Schema: `{"type":"record","name":"R","fields":[]}`, Type: sr.TypeAvro})
	return reg
}

// registryBatch holds one record of each kind; want is what each offset
// becomes: "" for a row, else the start of its dead letter's reason.
func registryBatch() (offsets.Batch, map[int64]string) {
	vals := []struct {
		v    []byte
		want string
	}{
		{[]byte(sampleEvent), ""},
		{wire(7, sampleEvent), ""},
		{wire(7, `{"source": "", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`), "schema: schema id 7: /source minLength: "},
		// Bronze's own rules come first: a title that is not a string is wrong_type.
		{wire(7, `{"source": "news", "title": 42, "timestamp": "2026-05-19T10:00:00Z"}`), "wrong_type: "},
		{[]byte(`{"source": "news", "timestamp": "2026-05-19T10:00:00Z"}`), "schema: schema id 7: / required: missing property 'title'"},
		{wire(8, sampleEvent), "wire_format: not a JSON Schema: schema id 8 is AVRO"},
		{[]byte{0, 0, 7}, "wire_format: wire-format header shorter than 5 bytes"},
		{wire(7, `{"source": "news"`), "syntax: "},
		{wire(7, `{"source": "news", "title": "t", "timestamp": "2026-05-19T10:00:00Z", "region": "eu"}`), ""},
		{wire(7, sampleEvent), ""},
	}
	b := offsets.Batch{Topic: "fintech.debt.raw", Partition: 3, Start: 100, End: 100 + int64(len(vals))}
	want := map[int64]string{}
	for i, v := range vals {
		off := 100 + int64(i)
		b.Records = append(b.Records, offsets.Record{Offset: off, Timestamp: 1_700_000_000_000, Value: v.v})
		want[off] = v.want
	}
	return b, want
}

func outcome(eb parse.EventBatch, db parse.DeadLetterBatch, want map[int64]string) map[int64]string {
	got := map[int64]string{}
	for _, r := range eb.Rows {
		got[r.KafkaOffset] = ""
	}
	for _, d := range db.Rows {
		// Keep as much of the reason as the expectation names.
		got[d.KafkaOffset] = d.Error[:min(len(d.Error), len(want[d.KafkaOffset]))]
		if want[d.KafkaOffset] == "" {
			got[d.KafkaOffset] = d.Error
		}
	}
	return got
}

func TestParseBatch(t *testing.T) {
	reg := fakeRegistry(t)
	res, err := registryio.NewResolver(registryio.Config{URL: reg.URL(), Subject: "fintech.debt.raw-value"})
	if err != nil {
		t.Fatal(err)
	}
	b, want := registryBatch()
	eb, db, err := registryio.ParseBatch(context.Background(), b, res, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, outcome(eb, db, want)); d != "" {
		t.Fatalf("outcome by offset (-want +got):\n%s", d)
	}
	for _, d := range db.Rows {
		if d.KafkaOffset == 102 && string(d.Payload[:5]) != string(registryio.AppendWire(nil, 7)) {
			t.Errorf("dead letter of offset 102 lost its wire-format header: %q", d.Payload)
		}
	}
	// The extra member of a wire-format event lands in extra.
	if last := eb.Rows[len(eb.Rows)-2]; last.Extra == nil || *last.Extra != `{"region":"eu"}` {
		t.Errorf("extra of offset 108 = %v, want {\"region\": \"eu\"}", *last.Extra)
	}

	// Without validation, violations are rows; an Avro id is still refused.
	eb, db, err = registryio.ParseBatch(context.Background(), b, res, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(eb.Rows) != 6 || len(db.Rows) != 4 {
		t.Errorf("without validation: %d rows, %d dead letters; want 6 and 4", len(eb.Rows), len(db.Rows))
	}
}

func TestParseBatchWithRegistryAwayIsNoDeadLetter(t *testing.T) {
	reg := fakeRegistry(t)
	url := reg.URL()
	reg.Close() // the registry is away
	res, err := registryio.NewResolver(registryio.Config{URL: url, Subject: "fintech.debt.raw-value", Wait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := registryBatch()
	eb, db, err := registryio.ParseBatch(context.Background(), b, res, true)
	if !errors.Is(err, registryio.ErrRegistry) {
		t.Fatalf("err = %v, want ErrRegistry", err)
	}
	if len(eb.Rows)+len(db.Rows) != 0 {
		t.Fatalf("a registry away made %d rows and %d dead letters, want none (the batch is retried)", len(eb.Rows), len(db.Rows))
	}
}

func init() {
	register.Function2x0(offsetsOfEvents)
	register.Function2x0(reasonsOfDeadLetters)
	register.Emitter1[int64]()
	register.Emitter1[string]()
}

func offsetsOfEvents(b parse.EventBatch, emit func(int64)) {
	for _, r := range b.Rows {
		emit(r.KafkaOffset)
	}
}

func reasonsOfDeadLetters(b parse.DeadLetterBatch, emit func(string)) {
	for _, r := range b.Rows {
		reason, _, _ := strings.Cut(r.Error, ":")
		emit(reason)
	}
}

func TestEventsWithRegistryPipeline(t *testing.T) {
	reg := fakeRegistry(t)
	b, _ := registryBatch()
	p, s := beam.NewPipelineWithRoot()
	good, bad := registryio.Events(s, beam.Create(s, b),
		registryio.Config{URL: reg.URL(), Subject: "fintech.debt.raw-value", Validate: true})
	passert.Equals(s, beam.ParDo(s, offsetsOfEvents, good), int64(100), int64(101), int64(108), int64(109))
	passert.Equals(s, beam.ParDo(s, reasonsOfDeadLetters, bad), "schema", "wrong_type", "schema", "wire_format", "wire_format", "syntax")
	ptest.RunAndValidate(t, p)
}

// BenchmarkParseBatch compares the registry path (wire format,
// id resolved from the cache, with and without validation) with ParseBatch
// on plain JSON.
func BenchmarkParseBatch(b *testing.B) {
	reg := srfake.New()
	defer reg.Close()
	text, _ := os.ReadFile("../../schemas/fintech.debt.raw-value.json")
	reg.SeedSchema("fintech.debt.raw-value", 1, 7, sr.Schema{Schema: string(text), Type: sr.TypeJSON})
	res, err := registryio.NewResolver(registryio.Config{URL: reg.URL(), Subject: "fintech.debt.raw-value"})
	if err != nil {
		b.Fatal(err)
	}
	plain, wired := offsets.Batch{Topic: "t"}, offsets.Batch{Topic: "t"}
	for i := range 4096 {
		plain.Records = append(plain.Records, offsets.Record{Offset: int64(i), Value: []byte(sampleEvent)})
		wired.Records = append(wired.Records, offsets.Record{Offset: int64(i), Value: wire(7, sampleEvent)})
	}
	b.Run("plain/ParseBatch", func(b *testing.B) {
		for b.Loop() {
			parse.ParseBatch(plain)
		}
		b.ReportMetric(float64(b.N*4096)/b.Elapsed().Seconds(), "events/s")
	})
	for _, validate := range []bool{false, true} {
		b.Run(fmt.Sprintf("wire/validate=%v", validate), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := registryio.ParseBatch(context.Background(), wired, res, validate); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*4096)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
