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
		parts, err := listPartitions(ctx, cfg, interval)
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

// listPartitions lists the partitions of cfg.Topic, each from its earliest
// to its end offset, through an admin client of its own.
func listPartitions(ctx context.Context, cfg Config, timeout time.Duration) ([]Partition, error) {
	t, err := Open(ctx, cfg, timeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.partitions(ctx, nil, Earliest, true)
}
