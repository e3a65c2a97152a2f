// Package embedded runs an in-process Kafka, franz-go's kfake, which speaks
// the real wire protocol: the embedded demo of pipelines/bronze uses it, and
// so does the fast test tier (through testing/kafkatest). Real deployments
// and the end-to-end tier use Apache Kafka.
package embedded

import (
	"context"
	"fmt"
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
	return produce(ctx, brokers, topic, kgo.RoundRobinPartitioner(), nil, values)
}

// ProduceKeyed sends values[i] with the key keys[i] to topic, each to its
// key's partition (Kafka's default partitioner, as franz-go's own), and
// waits until all are acknowledged.
func ProduceKeyed(ctx context.Context, brokers []string, topic string, keys, values [][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("ProduceKeyed: %d keys for %d values", len(keys), len(values))
	}
	return produce(ctx, brokers, topic, kgo.StickyKeyPartitioner(nil), keys, values)
}

func produce(ctx context.Context, brokers []string, topic string, p kgo.Partitioner, keys, values [][]byte) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(p), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var firstErr error
	for i, v := range values {
		r := &kgo.Record{Value: v}
		if keys != nil {
			r.Key = keys[i]
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return firstErr
}
