package kafkaio

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMain runs pipelines on Prism (ptest's default), in process, against
// kfake: the direct runner cannot run splittable DoFns, and the watermark
// table only works with the worker in this process.
func TestMain(m *testing.M) { ptest.Main(m) }

func init() {
	register.Function1x2(keyByPartition)
	register.DoFn3x0[int32, func(*offsets.Batch) bool, func(string)](&tilingFn{})
	register.Emitter1[string]()
	register.Function2x0(recordValues)
	register.DoFn1x2[offsets.Batch, int32, int](&countFn{})
	register.Function2x1(sumGroup)
	register.DoFn1x0[int](&addFn{})
	register.DoFn2x0[offsets.Batch, func(string)](&oversizeFn{})
}

const topic = "events"

// startKafka starts an in-process Kafka with topic of n partitions, closed
// when the test ends, and returns a read config for it.
func startKafka(t *testing.T, partitions int) Config {
	t.Helper()
	c, err := kafkatest.Start(topic, partitions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return Config{Brokers: c.Brokers(), Topic: topic}
}

func client(t *testing.T, cfg Config, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// value is the payload of the i-th record a test writes to a partition.
func value(tag string, p int32, i int) string { return fmt.Sprintf("%s-%d-%d", tag, p, i) }

// produce writes counts[p] records to each partition p, values tagged tag,
// and returns the values as recordValues renders them.
func produce(t *testing.T, cl *kgo.Client, tag string, counts map[int32]int) []string {
	t.Helper()
	recs := records(tag, counts)
	if err := produceAll(context.Background(), cl, recs); err != nil {
		t.Fatal(err)
	}
	vals := make([]string, len(recs))
	for i, r := range recs {
		vals[i] = fmt.Sprintf("%d:%s", r.Partition, r.Value)
	}
	return vals
}

// records returns counts[p] records for each partition p, values tagged tag.
func records(tag string, counts map[int32]int) []*kgo.Record {
	var recs []*kgo.Record
	for p, n := range counts {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Partition: p, Value: []byte(value(tag, p, i))})
		}
	}
	return recs
}

func produceAll(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	var first atomic.Value
	for _, r := range recs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				first.CompareAndSwap(nil, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

// endOffsets returns each partition's high watermark.
func endOffsets(t *testing.T, cfg Config) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(client(t, cfg))
	ends, err := adm.ListEndOffsets(context.Background(), cfg.Topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// open opens cfg's topic, closed when the test ends.
func open(t *testing.T, cfg Config) *Topic {
	t.Helper()
	tp, err := Open(context.Background(), cfg, 10*time.Second)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(tp.Close)
	return tp
}

// plan lists the partitions of cfg's topic with their ranges, as Plan does
// before it applies its rules and deals them into groups.
func plan(t *testing.T, cfg Config, committed map[int32]int64, policy StartPolicy, bounded bool) []Partition {
	t.Helper()
	parts, err := open(t, cfg).partitions(context.Background(), committed, policy, bounded)
	if err != nil {
		t.Fatalf("partitions: %v", err)
	}
	return parts
}

// runWithin runs p and fails the test if it does not return within limit.
// A hung Prism job cannot be cancelled safely (docs/DESIGN.md, "Runners"), so it is left
// behind.
func runWithin(t *testing.T, p *beam.Pipeline, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ptest.Run(p) }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the pipeline did not return within %v", limit)
		return nil
	}
}

// runUntilStop runs p in the background, stops cleanly (stop.Now) once ready() holds (or
// when limit has passed), and returns the run's error. It fails the test
// if ready never held.
func runUntilStop(t *testing.T, p *beam.Pipeline, limit time.Duration, ready func() bool) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ptest.Run(p) }()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ready() {
		select {
		case err := <-done:
			t.Fatalf("the unbounded pipeline returned before the stop: %v", err)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			stop.Now()
			t.Fatalf("not ready within %v; stopped", limit)
		}
	}
	stop.Now()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the pipeline did not return within 30s of the stop")
		return nil
	}
}

// counters are process-wide record counts that DoFns running in this
// process (Prism, loopback) add to, by name.
var counters sync.Map // name -> *atomic.Int64

var runs atomic.Int64

// uniqueName returns a counter name prefix unique to this run of the test,
// also under -count.
func uniqueName(t *testing.T) string { return fmt.Sprintf("%s#%d", t.Name(), runs.Add(1)) }

func counter(name string) *atomic.Int64 {
	v, _ := counters.LoadOrStore(name, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// countFn counts the records of each batch, in counter Name and as
// (partition, records).
type countFn struct{ Name string }

func (f *countFn) ProcessElement(b offsets.Batch) (int32, int) {
	counter(f.Name).Add(int64(len(b.Records)))
	return b.Partition, len(b.Records)
}

// addFn adds each element to counter Name.
type addFn struct{ Name string }

func (f *addFn) ProcessElement(n int) { counter(f.Name).Add(int64(n)) }

func sumGroup(_ int32, ns func(*int) bool) int {
	sum, n := 0, 0
	for ns(&n) {
		sum += n
	}
	return sum
}

func keyByPartition(b offsets.Batch) (int32, offsets.Batch) { return b.Partition, b }

// recordValues emits "partition:value" for every record.
func recordValues(b offsets.Batch, emit func(string)) {
	for _, r := range b.Records {
		emit(fmt.Sprintf("%d:%s", b.Partition, r.Value))
	}
}

// oversizeFn emits a message for each batch of more than Max records.
type oversizeFn struct{ Max int }

func (f *oversizeFn) ProcessElement(b offsets.Batch, emit func(string)) {
	if len(b.Records) > f.Max {
		emit(fmt.Sprintf("partition %d: batch [%d,%d) of %d records, more than %d", b.Partition, b.Start, b.End, len(b.Records), f.Max))
	}
}

// tilingFn checks the batches of one partition: they must tile the
// partition's restriction [Start, End) with no hole and no overlap, and
// each record must lie inside its batch, in offset order. It emits one
// message per violation. An unbounded partition may end anywhere.
type tilingFn struct {
	Parts []Partition
}

func (f *tilingFn) ProcessElement(p int32, iter func(*offsets.Batch) bool, emit func(string)) {
	var bs []offsets.Batch
	var b offsets.Batch
	for iter(&b) {
		bs = append(bs, b)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Start < bs[j].Start })
	var part *Partition
	for i := range f.Parts {
		if f.Parts[i].ID == p {
			part = &f.Parts[i]
		}
	}
	if part == nil {
		emit(fmt.Sprintf("partition %d was not planned", p))
		return
	}
	next := part.Start
	for _, b := range bs {
		if b.Topic != topic || b.Partition != p {
			emit(fmt.Sprintf("batch %s/%d in partition %d", b.Topic, b.Partition, p))
		}
		if b.Start != next {
			emit(fmt.Sprintf("partition %d: batch [%d,%d) follows %d", p, b.Start, b.End, next))
		}
		if b.End <= b.Start {
			emit(fmt.Sprintf("partition %d: empty batch [%d,%d)", p, b.Start, b.End))
		}
		last := b.Start - 1
		for _, r := range b.Records {
			if r.Offset < b.Start || r.Offset >= b.End || r.Offset <= last {
				emit(fmt.Sprintf("partition %d: record %d in batch [%d,%d) after %d", p, r.Offset, b.Start, b.End, last))
			}
			last = r.Offset
		}
		next = b.End
	}
	if part.End != unbounded && next != part.End {
		emit(fmt.Sprintf("partition %d: batches end at %d, want %d", p, next, part.End))
	}
}

// tiling returns the tiling violations of the batches, one string each.
func tiling(s beam.Scope, parts []Partition, batches beam.PCollection) beam.PCollection {
	return beam.ParDo(s, &tilingFn{Parts: parts}, beam.GroupByKey(s, beam.ParDo(s, keyByPartition, batches)))
}
