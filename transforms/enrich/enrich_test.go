package enrich

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
)

func init() {
	register.DoFn2x0[parse.EventBatch, func(beam.EventTime, parse.EventBatch)](&atFn{})
	register.Emitter2[beam.EventTime, parse.EventBatch]()
}

func TestMain(m *testing.M) { ptest.Main(m) }

const (
	stampMs = int64(1_779_184_800_123) // 2026-05-19T10:00:00.123Z
	stampUs = stampMs * 1000
)

func events() parse.EventBatch {
	return parse.EventBatch{
		Source: offsets.Range{Topic: "t", Partition: 0, Start: 7, End: 9},
		Rows:   []tables.BronzeEvent{{KafkaTopic: "t", KafkaOffset: 7}, {KafkaTopic: "t", KafkaOffset: 8}},
	}
}

func deadLetters() parse.DeadLetterBatch {
	return parse.DeadLetterBatch{
		Source: offsets.Range{Topic: "t", Partition: 0, Start: 7, End: 8},
		Rows:   []tables.DeadLetter{{Error: "not_json: x", KafkaTopic: "t", KafkaOffset: 7}},
	}
}

// The stage returns stamped copies and leaves its input as it was: Beam
// forbids a DoFn to change its input, which the runner may hand to other
// consumers of the same PCollection (Prism does within a fused stage).
func TestStampLeavesInputAlone(t *testing.T) {
	tests := []struct {
		name  string
		in    func() IngestionStamped // a fresh batch, IngestedAt 0
		stamp func(IngestionStamped) IngestionStamped
	}{
		{"events", func() IngestionStamped { return events() }, func(b IngestionStamped) IngestionStamped {
			e := b.(parse.EventBatch)
			for i := range e.Rows {
				e.Rows[i].IngestedAt = stampUs
			}
			return e
		}},
		{"dead letters", func() IngestionStamped { return deadLetters() }, func(b IngestionStamped) IngestionStamped {
			d := b.(parse.DeadLetterBatch)
			for i := range d.Rows {
				d.Rows[i].IngestedAt = stampUs
			}
			return d
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in()
			out := stampIngestedAt(mtime.FromMilliseconds(stampMs), in)
			if reflect.TypeOf(out) != reflect.TypeOf(in) {
				t.Fatalf("output is a %T, want the input's type %T", out, in)
			}
			if diff := cmp.Diff(tt.in(), in); diff != "" {
				t.Errorf("the input changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tt.stamp(tt.in()), out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// atFn emits each batch at Ms, as the Kafka read stamps its batches with
// ingestion time.
type atFn struct{ Ms int64 }

func (f *atFn) ProcessElement(b parse.EventBatch, emit func(beam.EventTime, parse.EventBatch)) {
	emit(mtime.FromMilliseconds(f.Ms), b)
}

// On a pipeline, every row takes its element's timestamp, and the input
// PCollection still holds the unstamped batch.
func TestIngestedAt(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.ParDo(s, &atFn{Ms: stampMs}, beam.Create(s, events()))
	out := IngestedAt(s, in)
	want := events()
	for i := range want.Rows {
		want.Rows[i].IngestedAt = stampUs
	}
	passert.Equals(s, out, want)
	passert.Equals(s, in, events())
	ptest.RunAndValidate(t, p)
}
