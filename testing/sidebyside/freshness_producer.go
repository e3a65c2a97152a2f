package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/haade/haade/testing/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pacedProducer sends sample events to one topic at a steady rate, round
// robin over its partitions, each record stamped with the time it was handed
// to the client (its Kafka timestamp: the topic's default CreateTime). It
// counts the acknowledged records per partition, which the exactly-once
// check compares with the table.
type pacedProducer struct {
	cl *kgo.Client
	// ring is a few seconds' worth of events made by the product's sample
	// generator, sent in turn: making every event afresh would cost the
	// contenders CPU that the comparison is not about.
	ring [][]byte

	mu       sync.Mutex
	acked    []int64 // per partition: highest acknowledged offset + 1
	firstErr error
}

func newPacedProducer(topic string, partitions int, seed uint64, ringSize int) (*pacedProducer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(200_000))
	if err != nil {
		return nil, err
	}
	g := kafkatest.NewGenerator(seed, 0, nil)
	g.UTC = true // the Connect sink fails on offsets (see --timestamps)
	g.Clock = kafkatest.LiveClock
	p := &pacedProducer{cl: cl, ring: make([][]byte, ringSize), acked: make([]int64, partitions)}
	for i := range p.ring {
		p.ring[i], _ = g.Next()
	}
	return p, nil
}

func (p *pacedProducer) Close() { p.cl.Close() }

func (p *pacedProducer) send(ctx context.Context, v []byte) {
	p.cl.Produce(ctx, &kgo.Record{Value: v, Timestamp: time.Now()}, func(r *kgo.Record, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			if p.firstErr == nil {
				p.firstErr = err
			}
			return
		}
		if int(r.Partition) < len(p.acked) {
			p.acked[r.Partition] = max(p.acked[r.Partition], r.Offset+1)
		}
	})
}

// burst sends n records at once and waits for them: the warm-up.
func (p *pacedProducer) burst(ctx context.Context, n int) error {
	for i := range n {
		p.send(ctx, p.ring[i%len(p.ring)])
	}
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	return p.err()
}

// paceStats is what a paced run did.
type paceStats struct {
	Sent      int64
	Elapsed   time.Duration
	MaxBehind time.Duration // the most the sends fell behind the schedule
}

// run sends rate events per second for d, on a 5 ms schedule: at each tick
// it sends what the schedule owes, so a slow tick is made up at the next
// one. It then waits for every acknowledgement.
func (p *pacedProducer) run(ctx context.Context, rate int, d time.Duration) (paceStats, error) {
	const tick = 5 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	total := int64(float64(rate) * d.Seconds())
	var st paceStats
	for st.Sent < total {
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
		el := time.Since(start)
		owed := min(total, int64(el.Seconds()*float64(rate)))
		if owed-st.Sent > int64(rate)/10 { // more than 100 ms behind
			st.MaxBehind = max(st.MaxBehind, time.Duration(float64(owed-st.Sent)/float64(rate)*float64(time.Second)))
		}
		for ; st.Sent < owed; st.Sent++ {
			p.send(ctx, p.ring[st.Sent%int64(len(p.ring))])
		}
	}
	st.Elapsed = time.Since(start)
	if err := p.cl.Flush(ctx); err != nil {
		return st, err
	}
	return st, p.err()
}

func (p *pacedProducer) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstErr != nil {
		return fmt.Errorf("produce: %w", p.firstErr)
	}
	return nil
}

// produced is how many records each partition holds.
func (p *pacedProducer) produced() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.acked...)
}
