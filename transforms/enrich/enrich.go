// Package enrich holds stages that add what the source record does not say.
package enrich

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function2x1[beam.EventTime, beam.X, beam.X](stampIngestedAt)
}

// IngestionStamped is a batch of rows with an ingested_at column.
type IngestionStamped interface {
	// WithIngestedAt returns a copy of the batch, of the batch's own type,
	// whose rows all have ingested_at us, in microseconds since the epoch,
	// UTC. It leaves the batch it is called on as it was: a DoFn must not
	// change its input, which the runner may hand to other consumers too.
	WithIngestedAt(us int64) any
}

var stampedType = reflect.TypeOf((*IngestionStamped)(nil)).Elem()

// IngestedAt sets ingested_at of every row of PCollection<B>, where B
// implements IngestionStamped, to the element's timestamp, which the Kafka
// read sets to ingestion time. Taking the element's timestamp rather than
// the clock keeps a row's ingested_at inside the window that commits it.
// It returns PCollection<B> of stamped copies; the input batches are left
// as they are.
func IngestedAt(s beam.Scope, batches beam.PCollection) beam.PCollection {
	s = s.Scope("enrich.IngestedAt")
	if t := batches.Type().Type(); !t.Implements(stampedType) {
		panic(fmt.Sprintf("enrich.IngestedAt: %v does not implement enrich.IngestionStamped", t))
	}
	return beam.ParDo(s, stampIngestedAt, batches)
}

func stampIngestedAt(et beam.EventTime, b beam.X) beam.X {
	return b.(IngestionStamped).WithIngestedAt(et.Milliseconds() * 1000)
}
