// Package kafkatest starts an in-process Kafka (franz-go's kfake, which
// speaks the real wire protocol) and produces sample fintech events to it.
// It serves the fast test tier and the embedded demo; the end-to-end tier
// runs real Apache Kafka (testing/services).
package kafkatest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is an in-process Kafka.
type Cluster struct {
	*kfake.Cluster
}

// Start starts an in-process Kafka with topic already created with the
// given partitions. Close it when done.
func Start(topic string, partitions int) (*Cluster, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		return nil, err
	}
	return &Cluster{c}, nil
}

// Brokers returns the bootstrap addresses.
func (c *Cluster) Brokers() []string { return c.ListenAddrs() }

// Produce sends values to topic, round-robin over its partitions, and
// waits until all are acknowledged. A nil value is a tombstone.
func Produce(ctx context.Context, brokers []string, topic string, values [][]byte) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var firstErr error
	done := make(chan struct{}, 1)
	n := 0
	for _, v := range values {
		n++
		cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	_ = done
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return firstErr
}

var (
	sources = []string{"news", "Reuters", " bloomberg ", "FT", "sec-filings", "twitter", "central-bank", "rating-agency"}
	verbs   = []string{"update", "downgrade", "upgrade", "default warning", "issuance", "refinancing", "yield spike", "restructuring"}
	nouns   = []string{"Debt market", "Sovereign bond", "Corporate credit", "High-yield", "Municipal debt", "Treasury", "Emerging-market debt", "Leveraged loan"}
)

// Sample returns n realistic fintech-debt events as JSON, deterministic for
// a seed. About badRatio of them are malformed, drawn from malformed.
func Sample(n int, seed uint64, badRatio float64, malformed [][]byte) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	base := time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC)
	out := make([][]byte, n)
	for i := range out {
		if len(malformed) > 0 && r.Float64() < badRatio {
			out[i] = malformed[r.IntN(len(malformed))]
			continue
		}
		ts := base.Add(time.Duration(i) * time.Second).Add(time.Duration(r.IntN(1000)) * time.Millisecond)
		src := sources[r.IntN(len(sources))]
		title := fmt.Sprintf("%s %s", nouns[r.IntN(len(nouns))], verbs[r.IntN(len(verbs))])
		switch r.IntN(10) {
		case 0: // an extra member, and an offset timestamp
			out[i] = fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q, "amount_musd": %d, "currency": "USD"}`,
				src, title, ts.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano), r.IntN(5000))
		case 1: // a null title
			out[i] = fmt.Appendf(nil, `{"source": %q, "title": null, "timestamp": %q}`, src, ts.Format(time.RFC3339))
		default:
			out[i] = fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q}`, src, title, ts.Format(time.RFC3339))
		}
	}
	return out
}

// ProduceSample produces n sample events with badRatio malformed to topic.
func ProduceSample(ctx context.Context, brokers []string, topic string, n int, seed uint64, badRatio float64, malformed [][]byte) ([][]byte, error) {
	vals := Sample(n, seed, badRatio, malformed)
	return vals, Produce(ctx, brokers, topic, vals)
}

// Addr joins broker addresses for a --brokers flag.
func Addr(brokers []string) string { return strings.Join(brokers, ",") }
