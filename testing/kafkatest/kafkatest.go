// Package kafkatest is the Kafka kit of the fast test tier: an in-process
// Kafka (io/kafkaio/embedded) and sample fintech events (transforms/sample).
// The end-to-end tier runs real Apache Kafka (testing/services).
package kafkatest

import (
	"context"
	"fmt"
	"strings"

	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/transforms/sample"
)

var (
	// Start starts an in-process Kafka (an *embedded.Cluster) with one topic.
	Start = embedded.Start
	// Produce sends values round-robin and waits for the acknowledgements.
	Produce = embedded.Produce
	// ProduceKeyed sends values with their keys, each to its key's
	// partition, and waits for the acknowledgements.
	ProduceKeyed = embedded.ProduceKeyed
	// Sample returns n sample events, about badRatio of them malformed.
	Sample = sample.Sample
	// NewGenerator returns a sample event generator (a *sample.Generator).
	NewGenerator = sample.NewGenerator
	// LiveClock stamps events with the current time.
	LiveClock = sample.LiveClock
)

// ProduceSample produces n sample events with badRatio malformed to topic.
func ProduceSample(ctx context.Context, brokers []string, topic string, n int, seed uint64, badRatio float64, malformed [][]byte) ([][]byte, error) {
	vals := Sample(n, seed, badRatio, malformed)
	return vals, Produce(ctx, brokers, topic, vals)
}

// Addr joins broker addresses for a --brokers flag.
func Addr(brokers []string) string { return strings.Join(brokers, ",") }

// SpreadKeys are the Kafka keys of events [from, from+n) over keys keys:
// event i's is debtor-(i*7919 mod keys). 7919 is prime, so the first keys
// events cover every key once (keys not a multiple of it), and each later
// run of keys events updates every key again, in a scattered order.
func SpreadKeys(from, n, keys int) [][]byte {
	out := make([][]byte, n)
	for j := range out {
		out[j] = fmt.Appendf(nil, "debtor-%d", (from+j)*7919%keys)
	}
	return out
}
