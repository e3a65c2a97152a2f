package kafkaio_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/transforms/offsets"
)

func init() { register.Function1x1(recordsIn) }

func recordsIn(b offsets.Batch) int { return len(b.Records) }

// A bounded read of a topic with two partitions, on an in-process broker:
// the batches hold every record once.
func Example() {
	ctx := context.Background()
	k, err := embedded.Start("events", 2)
	if err != nil {
		panic(err)
	}
	defer k.Close()
	values := [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`), []byte(`{"n":3}`)}
	if err := embedded.Produce(ctx, k.Brokers(), "events", values); err != nil {
		panic(err)
	}

	// Plan the read: the topic's partitions, from their earliest offsets
	// (no offsets committed yet) to their ends of this moment.
	topic, err := kafkaio.Open(ctx, kafkaio.Config{Brokers: k.Brokers(), Topic: "events"}, 10*time.Second)
	if err != nil {
		panic(err)
	}
	defer topic.Close()
	src, err := topic.Plan(ctx, kafkaio.PlanOpts{Bounded: true})
	if err != nil {
		panic(err)
	}
	p, s := beam.NewPipelineWithRoot()
	batches := kafkaio.Read(s, src)
	passert.Equals(s, stats.Sum(s, beam.ParDo(s, recordsIn, batches)), len(values))
	if err := ptest.Run(p); err != nil {
		panic(err)
	}
	fmt.Printf("read %d records from %d partitions\n", len(values), len(src.Partitions))
	// Output: read 3 records from 2 partitions
}
