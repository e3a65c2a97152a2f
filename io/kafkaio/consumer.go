package kafkaio

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumer is a client that reads one partition. next is the offset after
// the last record it returned; its buffered fetches continue from there.
type consumer struct {
	cl   *kgo.Client
	next int64
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
		c.cl.Close() // positioned elsewhere: the runner moved the restriction
	}
	opts, err := cfg.consumerOptions(partition, at)
	if err != nil {
		return nil, err
	}
	cl, err := newClient(fmt.Sprintf("read/%s/%d", cfg.Topic, partition), opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return &consumer{cl: cl, next: at}, nil
}

// putConsumer gives a client back for the next call of its partition.
func putConsumer(read string, partition int32, c *consumer) {
	key := consumerKey(read, partition)
	consumers.Lock()
	old := consumers.m[key]
	consumers.m[key] = c
	consumers.Unlock()
	if old != nil {
		old.cl.Close()
	}
}

// closeConsumer drops a partition's client, when the partition is done.
func closeConsumer(c *consumer) {
	if c != nil {
		c.cl.Close()
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
		c.cl.Close()
	}
}
