package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/runners"
)

// partitionWatchInterval is how often a streaming run looks for partitions
// added to the topic.
var partitionWatchInterval = 10 * time.Second

// runGrowing runs the pipeline p that build planned as pl. A streaming run
// in process (Prism) also watches the topic: when partitions are added,
// it stops the reads at their current offsets, lets the last windows
// commit, plans again from the tables' offsets (the new partitions from
// their earliest offset), and runs again, without a restart of the
// process. A stop by signal ends the loop. On Flink the new partitions are
// logged and their lag exported; the job takes them when it is submitted
// again (--replace).
func runGrowing(ctx, runCtx context.Context, cfg Config, p *beam.Pipeline, pl *plan) (*plan, error) {
	for {
		var ourStop atomic.Int64
		watchCtx, stopWatch := context.WithCancel(ctx)
		if !cfg.Bounded {
			go kafkaio.WatchPartitions(watchCtx, cfg.Kafka, pl.Partitions, partitionWatchInterval, func(added []kafkaio.Partition) {
				ids := make([]int32, len(added))
				for i, a := range added {
					ids[i] = a.ID
				}
				if cfg.Runner == "flink" {
					slog.Warn("partitions added to the topic: the Flink job reads them once submitted again (--replace); their lag is exported",
						"topic", cfg.Kafka.Topic, "partitions", ids)
					return
				}
				slog.Warn("partitions added to the topic: reads end at their current offsets, the last windows commit, then bronze plans again and reads the new partitions from their earliest offset",
					"topic", cfg.Kafka.Topic, "partitions", ids)
				kafkaio.Stop()
				ourStop.Store(kafkaio.StopTime())
			})
		}
		_, err := runners.RunWith(runCtx, cfg.Runner, p, runners.Options{
			Unbounded: !cfg.Bounded, Name: cfg.Pipeline, Parallelism: len(pl.Partitions)})
		stopWatch()
		if err != nil || ourStop.Load() == 0 || kafkaio.StopTime() != ourStop.Load() {
			return pl, err // done, failed, or stopped by a signal
		}
		icebergio.Running() // the stop was ours, not the process's
		np, s := beam.NewPipelineWithRoot()
		npl, err := build(ctx, s, cfg)
		if err != nil {
			return pl, err
		}
		slog.Info("running again with the new partitions", "topic", cfg.Kafka.Topic, "partitions", len(npl.Partitions))
		p, pl = np, npl
	}
}
