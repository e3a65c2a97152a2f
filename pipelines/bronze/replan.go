package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/pipelines/bronze/bronze"
)

// partitionWatchInterval is how often a streaming run looks for partitions
// added to its topic.
var partitionWatchInterval = 10 * time.Second

// watchPartitions returns the Job.Watch of a streaming run that reads
// partitions: when the topic gains partitions, on Prism, it asks the harness
// to plan again (replan stops the reads at their current offsets, the last
// windows commit, and the next plan reads the new partitions from their
// earliest offset), without a restart of the process. On Flink it only says
// so: the job reads them once submitted again with --replace, and their lag
// is exported.
//
// Each topic is watched on its own goroutine; the first that grows asks for
// the new plan, which covers every topic.
func watchPartitions(cfg bronze.Config, sources []*kafkaio.Source) func(context.Context, func()) {
	return func(ctx context.Context, replan func()) {
		var wg sync.WaitGroup
		var once sync.Once
		for i, topic := range cfg.Topics() {
			wg.Go(func() {
				kafkaio.WatchPartitions(ctx, cfg.KafkaOf(topic), sources[i].Partitions, partitionWatchInterval, func(added []kafkaio.Partition) {
					ids := make([]int32, len(added))
					for i, a := range added {
						ids[i] = a.ID
					}
					if cfg.Runner == "flink" {
						slog.Warn("partitions added to the topic: the Flink job reads them once submitted again (--replace); their lag is exported",
							"topic", topic, "partitions", ids)
						return
					}
					slog.Warn("partitions added to the topic: reads end at their current offsets, the last windows commit, then bronze plans again and reads the new partitions from their earliest offset",
						"topic", topic, "partitions", ids)
					once.Do(replan)
				})
			})
		}
		wg.Wait()
	}
}
