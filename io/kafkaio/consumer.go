package kafkaio

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer is a client that reads the partitions of one group. next holds,
// for each partition it consumes, the offset after the last record a call
// took from it; its buffered fetches, and the poll it holds ahead, continue
// from there.
//
// A goroutine of its own polls the client one poll ahead of the call: while
// a call emits batches (and, on Prism, parses them and hands them to the
// writers on the same goroutine), the next fetch is being fetched and
// decoded. franz-go keeps one fetch buffered per client and asks for the
// next only once that one is drained, so a call that polled only when it
// needed records waited for the broker about once per fetch: about a
// quarter of a backlog's read time, with the cores idle.
type consumer struct {
	cl    *kgo.Client
	topic string
	next  map[int32]int64
	// lag is how far behind the log's end the last fetch of each
	// partition left it; a partition no fetch has told of is missing.
	// missed is set when the last call got no poll before its deadline
	// (see readFn.ProcessElement).
	lag    map[int32]int64
	missed bool

	ahead chan kgo.Fetches // the next poll, handed over when taken
	// held is set while the polling goroutine holds a poll that no call
	// has taken yet: the prefetch is ahead of the call.
	held atomic.Bool
	stop context.CancelFunc
	done chan struct{} // closed when the polling goroutine has returned
}

// newConsumer starts polling cl, which consumes topic's partitions from
// the offsets in at, into ahead.
func newConsumer(cl *kgo.Client, topic string, at map[int32]int64) *consumer {
	ctx, stop := context.WithCancel(context.Background())
	c := &consumer{cl: cl, topic: topic, next: maps.Clone(at), lag: map[int32]int64{},
		ahead: make(chan kgo.Fetches), stop: stop, done: make(chan struct{})}
	go c.prefetch(ctx)
	return c
}

// prefetch polls whole fetches: the read cuts them into batches of one
// partition each.
func (c *consumer) prefetch(ctx context.Context) {
	defer close(c.done)
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return // closed: what it held is dropped with the client
		}
		if fs.Empty() && len(fs.Errors()) == 0 {
			continue // nothing to hand over; errors are, for the call to fail on
		}
		c.held.Store(true)
		select {
		case c.ahead <- fs:
			c.held.Store(false)
		case <-ctx.Done():
			return
		}
	}
}

// poll returns the next poll, or nil when none comes before deadline, by
// clk, or ctx ends. The records of each partition come in its order, each
// once.
func (c *consumer) poll(ctx context.Context, clk clock, deadline time.Time) kgo.Fetches {
	expired, stop := clk.Timer(deadline.Sub(clk.Now()))
	defer stop()
	select {
	case fs := <-c.ahead:
		return fs
	case <-expired:
		return nil
	case <-ctx.Done():
		return nil
	}
}

// took moves next past every record of fs, whether or not the call emits
// it: the client has handed them over.
func (c *consumer) took(fs kgo.Fetches) {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if _, ok := c.next[p.Partition]; ok && p.Topic == c.topic && len(p.Records) > 0 {
			c.next[p.Partition] = p.Records[len(p.Records)-1].Offset + 1
		}
	})
}

// at reports whether the client continues every partition of open from
// its Start.
func (c *consumer) at(open []Partition) bool {
	for _, p := range open {
		if n, ok := c.next[p.ID]; !ok || n != p.Start {
			return false
		}
	}
	return true
}

// drop stops consuming the partitions of ids (read to their end).
func (c *consumer) drop(ids ...int32) {
	var gone []int32
	for _, id := range ids {
		if _, ok := c.next[id]; ok {
			delete(c.next, id)
			delete(c.lag, id)
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		c.cl.RemoveConsumePartitions(map[string][]int32{c.topic: gone})
	}
}

// caughtUp reports whether the last fetch of every partition that one told
// of left it at the log's end, and some fetch told.
func (c *consumer) caughtUp() bool {
	return len(c.lag) > 0 && c.behind() == 0
}

// behind is how many records the partitions were behind the log's end, by
// the last fetch of each.
func (c *consumer) behind() int64 {
	var n int64
	for _, l := range c.lag {
		n += l
	}
	return n
}

// close stops the polling goroutine and closes the client.
func (c *consumer) close() {
	c.stop()
	c.cl.Close()
	<-c.done
}

// consumers keeps one client per group of a read across calls, so that a
// self-checkpoint does not cost a new connection and the fetches buffered
// ahead are not thrown away.
var consumers = struct {
	sync.Mutex
	m map[string]*consumer // read id/group -> idle consumer
}{m: map[string]*consumer{}}

func consumerKey(read string, group int32) string { return fmt.Sprintf("%s/%d", read, group) }

// takeConsumer returns a client that continues each partition of open
// (those with offsets left to read) from its Start. The caller owns it
// until it calls putConsumer.
func takeConsumer(read string, cfg Config, group int32, open []Partition) (*consumer, error) {
	key := consumerKey(read, group)
	consumers.Lock()
	c := consumers.m[key]
	delete(consumers.m, key)
	consumers.Unlock()
	if c != nil && c.at(open) {
		for id := range c.next {
			if !slices.ContainsFunc(open, func(p Partition) bool { return p.ID == id }) {
				c.drop(id) // read to its end by an earlier call
			}
		}
		return c, nil
	}
	if c != nil {
		c.close() // positioned elsewhere: the runner moved the restriction
	}
	at := make(map[int32]int64, len(open))
	for _, p := range open {
		at[p.ID] = p.Start
	}
	opts, err := cfg.consumerOptions(at)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("read/%s/%d", cfg.Topic, group)
	summed := "read/" + cfg.Topic
	if cfg.ClientMetricsPerPartition {
		summed = ""
	}
	cl, err := newGroupedClient(name, summed, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return newConsumer(cl, cfg.Topic, at), nil
}

// putConsumer gives a client back for the next call of its group.
func putConsumer(read string, group int32, c *consumer) {
	key := consumerKey(read, group)
	consumers.Lock()
	old := consumers.m[key]
	consumers.m[key] = c
	consumers.Unlock()
	if old != nil {
		old.close()
	}
}

// closeConsumer drops a group's client, when the group is done.
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
