package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkTopic waits up to --connect-timeout for a broker to answer, then
// checks that the topic exists, creating it when --partitions-create asks
// for it. It returns the topic's partition count.
func checkTopic(ctx context.Context, cl *kgo.Client, cfg Config) (int, error) {
	brokers := strings.Join(cfg.Kafka.Brokers, ",")
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, cfg.Kafka.Topic)
	if err != nil {
		return 0, fmt.Errorf("--brokers=%s: unreachable (waited up to %v): %v", brokers, cfg.ConnectTimeout, err)
	}
	td, ok := topics[cfg.Kafka.Topic]
	if ok && td.Err == nil {
		if cfg.PartitionsCreate > 0 {
			slog.Info("topic exists, not created", "topic", cfg.Kafka.Topic, "partitions", len(td.Partitions))
		}
		return len(td.Partitions), nil
	}
	if ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return 0, fmt.Errorf("--topic=%s on --brokers=%s: %v", cfg.Kafka.Topic, brokers, td.Err)
	}
	if cfg.PartitionsCreate == 0 {
		return 0, fmt.Errorf("--topic=%s: no such topic on --brokers=%s; create it, or pass --partitions-create=N", cfg.Kafka.Topic, brokers)
	}
	resp, err := adm.CreateTopic(ctx, int32(cfg.PartitionsCreate), int16(cfg.ReplicationFactor), nil, cfg.Kafka.Topic)
	if errors.Is(err, kerr.TopicAlreadyExists) {
		// Another producer created it meanwhile.
		return checkTopic(ctx, cl, Config{Kafka: cfg.Kafka, ConnectTimeout: cfg.ConnectTimeout})
	}
	if err != nil {
		return 0, fmt.Errorf("--partitions-create=%d: create topic %s on --brokers=%s: %v", cfg.PartitionsCreate, cfg.Kafka.Topic, brokers, err)
	}
	slog.Info("created topic", "topic", cfg.Kafka.Topic, "partitions", resp.NumPartitions, "replication_factor", resp.ReplicationFactor)
	return cfg.PartitionsCreate, nil
}
