package kafkaio

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// WatchPartitions polls cfg.Topic every interval (default 10s) until ctx
// ends, and calls grown once, with the new partitions and where each one's
// log starts, when the topic has more partitions than known lists. Until
// the read takes them, their lag (end offset minus start offset) is
// exported in haade_kafka_consumer_lag, so that HaadeLagGrowing can fire.
//
// A running read cannot take new restrictions (its groups are made at
// construction), so the caller stops the read (runners.Stop) and plans
// again: the new partitions are then read from their earliest offset.
func WatchPartitions(ctx context.Context, cfg Config, known []Partition, interval time.Duration, grown func(added []Partition)) {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	have := map[int32]bool{}
	for _, p := range known {
		have[p.ID] = true
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		parts, err := Plan(ctx, cfg, nil, Earliest, true, interval)
		if err != nil {
			slog.Debug("watching partitions", "topic", cfg.Topic, "err", err)
			continue
		}
		var added []Partition
		for _, p := range parts {
			if !have[p.ID] {
				added = append(added, p)
				consumerLag.WithLabelValues(cfg.Topic, strconv.Itoa(int(p.ID))).Set(float64(p.End - p.Start))
			}
		}
		if len(added) > 0 {
			grown(added)
			return
		}
	}
}
