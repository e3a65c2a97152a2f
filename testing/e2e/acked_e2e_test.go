//go:build e2e

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ackedProducer produces records with franz-go at about a steady rate until
// finished, and hands each record Kafka acknowledged, with its partition
// and offset, to the callback that came with it: what the test then holds
// as the truth.
type ackedProducer struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex // held while a callback runs
	err  error
}

// startAcked produces next(0), next(1), ... through cl, rate records a
// second; next returns the record and what to do once it is acknowledged
// (called one at a time).
func startAcked(cl *kgo.Client, rate int, next func(n int) (*kgo.Record, func(*kgo.Record))) *ackedProducer {
	ap := &ackedProducer{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(ap.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := 0; ; i++ {
			select {
			case <-ap.stop:
				return
			case <-tick.C:
			}
			for j := range rate / 100 {
				rec, acked := next(i*(rate/100) + j)
				wg.Add(1)
				cl.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
					defer wg.Done()
					ap.mu.Lock()
					defer ap.mu.Unlock()
					if err != nil {
						ap.err = err
						return
					}
					acked(r)
				})
			}
		}
	}()
	return ap
}

// finish stops producing and waits for every acknowledgement.
func (ap *ackedProducer) finish(t *testing.T) {
	t.Helper()
	close(ap.stop)
	<-ap.done
	if ap.err != nil {
		t.Fatalf("producing: %v", ap.err)
	}
}
