package kafkaio

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer is a client that reads one partition. next is the offset after
// the last record a call took from it; its buffered fetches, and the poll
// it holds ahead, continue from there.
//
// A goroutine of its own polls the client one poll ahead of the call: while
// a call emits a batch (and, on Prism, parses it and hands it to the
// writers on the same goroutine), the next batch is being fetched and
// decoded. franz-go keeps one fetch buffered per client and asks for the
// next only once that one is drained, so a call that polled only when it
// needed records waited for the broker about once per fetch: about a
// quarter of a backlog's read time, with the cores idle.
type consumer struct {
	cl   *kgo.Client
	next int64
	// lag is how far behind the log's end the last poll left the
	// partition, -1 before a poll told; missed is set when the last call
	// got no poll before its deadline (see readFn.ProcessElement).
	lag    int64
	missed bool

	ahead chan kgo.Fetches // the next poll, handed over when taken
	stop  context.CancelFunc
	done  chan struct{} // closed when the polling goroutine has returned
}

// newConsumer starts polling cl, max records a poll, into ahead.
func newConsumer(cl *kgo.Client, at int64, max int) *consumer {
	ctx, stop := context.WithCancel(context.Background())
	c := &consumer{cl: cl, next: at, lag: -1, ahead: make(chan kgo.Fetches), stop: stop, done: make(chan struct{})}
	go c.prefetch(ctx, max)
	return c
}

func (c *consumer) prefetch(ctx context.Context, max int) {
	defer close(c.done)
	for {
		fs := c.cl.PollRecords(ctx, max)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return // closed: what it held is dropped with the client
		}
		if fs.Empty() && len(fs.Errors()) == 0 {
			continue // nothing to hand over; errors are, for the call to fail on
		}
		select {
		case c.ahead <- fs:
		case <-ctx.Done():
			return
		}
	}
}

// poll returns the next poll, or nil when none comes before deadline or
// ctx ends. Records come in the order of the partition, each once.
func (c *consumer) poll(ctx context.Context, deadline time.Time) kgo.Fetches {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case fs := <-c.ahead:
		return fs
	case <-t.C:
		return nil
	case <-ctx.Done():
		return nil
	}
}

// close stops the polling goroutine and closes the client.
func (c *consumer) close() {
	c.stop()
	c.cl.Close()
	<-c.done
}

// consumers keeps one client per partition of a read across calls, so that
// a self-checkpoint does not cost a new connection and the fetches buffered
// ahead are not thrown away.
var consumers = struct {
	sync.Mutex
	m map[string]*consumer // read id/partition -> idle consumer
}{m: map[string]*consumer{}}

func consumerKey(read string, partition int32) string { return fmt.Sprintf("%s/%d", read, partition) }

// takeConsumer returns a client positioned at offset at. The caller owns
// it until it calls putConsumer.
func takeConsumer(read string, cfg Config, partition int32, at int64) (*consumer, error) {
	key := consumerKey(read, partition)
	consumers.Lock()
	c := consumers.m[key]
	delete(consumers.m, key)
	consumers.Unlock()
	if c != nil && c.next == at {
		return c, nil
	}
	if c != nil {
		c.close() // positioned elsewhere: the runner moved the restriction
	}
	opts, err := cfg.consumerOptions(partition, at)
	if err != nil {
		return nil, err
	}
	group := "read/" + cfg.Topic
	if cfg.ClientMetricsPerPartition {
		group = ""
	}
	cl, err := newGroupedClient(fmt.Sprintf("%s/%d", "read/"+cfg.Topic, partition), group, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return newConsumer(cl, at, cfg.BatchSize), nil
}

// putConsumer gives a client back for the next call of its partition.
func putConsumer(read string, partition int32, c *consumer) {
	key := consumerKey(read, partition)
	consumers.Lock()
	old := consumers.m[key]
	consumers.m[key] = c
	consumers.Unlock()
	if old != nil {
		old.close()
	}
}

// closeConsumer drops a partition's client, when the partition is done.
func closeConsumer(c *consumer) {
	if c != nil {
		c.close()
	}
}

// closeRead closes every idle client of a read.
func closeRead(read string) {
	consumers.Lock()
	var cs []*consumer
	for k, c := range consumers.m {
		if len(k) > len(read) && k[:len(read)] == read && k[len(read)] == '/' {
			cs = append(cs, c)
			delete(consumers.m, k)
		}
	}
	consumers.Unlock()
	for _, c := range cs {
		c.close()
	}
}
