package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/sample"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Report is what a run sent: records and bytes the brokers acknowledged.
type Report struct {
	Sent      int64 // records acknowledged, malformed ones included
	Malformed int64 // malformed records acknowledged
	Bytes     int64 // bytes of the values acknowledged
	Failed    int64 // records the brokers never acknowledged
	Elapsed   time.Duration
	FirstErr  error // the first produce error, if any
}

// Rate is the acknowledged events per second.
func (r Report) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Elapsed.Seconds()
}

func (r Report) String() string {
	s := fmt.Sprintf("sent %d events (%d malformed, %d bytes) in %v: %.0f events/s",
		r.Sent, r.Malformed, r.Bytes, r.Elapsed.Round(time.Millisecond), r.Rate())
	if r.Failed > 0 {
		s += fmt.Sprintf("; %d failed, first error: %v", r.Failed, r.FirstErr)
	}
	return s
}

// produce sends events until cfg.Count are sent or stop is closed, paced
// at cfg.Rate, then waits up to cfg.FlushTimeout for the brokers'
// acknowledgements. Records still unacknowledged then count as failed.
// A schemaID > 0 prefixes every value with its wire-format header.
func produce(stop <-chan struct{}, cl *kgo.Client, cfg Config, schemaID int) Report {
	topic := cfg.Kafka.Topic
	gen := sample.NewGenerator(cfg.Seed, cfg.BadRatio, event.MalformedCorpus)
	gen.Clock = sample.LiveClock
	produceTargetRate.WithLabelValues(topic).Set(cfg.Rate)
	valid := producedRecords.WithLabelValues(topic, "valid")
	bad := producedRecords.WithLabelValues(topic, "malformed")
	bytes := producedBytes.WithLabelValues(topic)
	errs := produceErrors.WithLabelValues(topic)
	latency := produceLatency.WithLabelValues(topic)

	// Records keep the context they were produced with: cancelling it fails
	// those still buffered. So a stop only ends the loop, and the context
	// ends when the flush gives up.
	pctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		// A Produce that blocks on a full buffer (brokers away) gives up
		// FlushTimeout after a stop.
		select {
		case <-done:
		case <-stop:
			select {
			case <-done:
			case <-time.After(cfg.FlushTimeout):
				cancel()
			}
		}
	}()

	var (
		sent, malformed, nbytes atomic.Int64
		mu                      sync.Mutex
		firstErr                error
	)
	started := time.Now()
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.Rate)
	}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var n int64
	for cfg.Count == 0 || n < cfg.Count {
		if interval > 0 {
			// Event n is due at started + n*interval; sleeping only when
			// ahead keeps the average rate even when sleeps overshoot.
			if wait := time.Until(started.Add(time.Duration(n) * interval)); wait > 0 {
				select {
				case <-stop:
				case <-time.After(wait):
				}
			}
		}
		if stopped() {
			break
		}
		v, isBad := gen.Next()
		if schemaID > 0 {
			v = append(registryio.AppendWire(make([]byte, 0, 5+len(v)), schemaID), v...)
		}
		at := time.Now()
		cl.Produce(pctx, &kgo.Record{Topic: topic, Value: v}, func(r *kgo.Record, err error) {
			if err != nil {
				errs.Inc()
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			sent.Add(1)
			nbytes.Add(int64(len(r.Value)))
			bytes.Add(float64(len(r.Value)))
			latency.Observe(time.Since(at).Seconds())
			if isBad {
				malformed.Add(1)
				bad.Inc()
			} else {
				valid.Inc()
			}
		})
		n++
	}
	fctx, fcancel := context.WithTimeout(context.Background(), cfg.FlushTimeout)
	defer fcancel()
	if err := cl.Flush(fctx); err != nil {
		slog.Warn("flush gave up; buffered records fail", "timeout", cfg.FlushTimeout, "err", err)
		cancel()
		// Cancelled records fail at once, unless a request is in flight.
		gctx, gcancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = cl.Flush(gctx)
		gcancel()
	}
	elapsed := time.Since(started)
	mu.Lock()
	defer mu.Unlock()
	r := Report{Sent: sent.Load(), Malformed: malformed.Load(), Bytes: nbytes.Load(), Elapsed: elapsed, FirstErr: firstErr}
	// Records neither acknowledged nor failed yet count as failed.
	r.Failed = n - r.Sent
	if r.Failed > 0 && r.FirstErr == nil {
		r.FirstErr = fmt.Errorf("%d records unacknowledged after --flush-timeout=%v", r.Failed, cfg.FlushTimeout)
	}
	return r
}
