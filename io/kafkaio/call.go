package kafkaio

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kgo"
)

// call is one ProcessElement call of a group: where each of its partitions
// is, and the stamps of what the call emitted. It cuts whole fetches into
// batches of one partition each, at most Cfg.BatchSize records, so that
// what follows the read (the writers, the offsets each window commits)
// sees the batches of one partition in order, as when each partition had
// an element of its own.
type call struct {
	topic string
	size  int // Cfg.BatchSize
	rt    *sdf.LockRTracker
	we    *watermarkEstimator
	out   func(beam.EventTime, offsets.Batch)
	c     *consumer // set once the call has one

	parts []*partRead // in the restriction's order
	byID  map[int32]*partRead
	// first is the stamp of the call's first batch (MaxTimestamp before
	// one), last that of its latest.
	first, last mtime.Time
}

// partRead is one partition of a call. Start is the first offset not yet
// covered by an emitted batch.
type partRead struct {
	Partition
	atEnd bool // a record at or past End was fetched
	done  bool // read to End
	m     partitionMetrics
}

func (f *readFn) newCall(rt *sdf.LockRTracker, we *watermarkEstimator, r groupRestriction, out func(beam.EventTime, offsets.Batch)) *call {
	c := &call{topic: f.Cfg.Topic, size: f.Cfg.BatchSize, rt: rt, we: we, out: out,
		byID: make(map[int32]*partRead, len(r.Parts)), first: mtime.MaxTimestamp}
	for _, p := range r.Parts {
		pr := &partRead{Partition: p, done: p.Start >= p.End, m: metricsFor(f.Cfg.Topic, p.ID)}
		c.parts = append(c.parts, pr)
		c.byID[p.ID] = pr
	}
	return c
}

// open returns the partitions with offsets left to read, each from where
// the call is.
func (c *call) open() []Partition {
	var out []Partition
	for _, p := range c.parts {
		if !p.done {
			out = append(out, p.Partition)
		}
	}
	return out
}

// cut emits the records of fs as batches, and notes each partition's lag.
// It returns false when a claim failed: the runner split the restriction,
// and the call must emit nothing more.
func (c *call) cut(fs kgo.Fetches) bool {
	ok := true
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		p := c.byID[fp.Partition]
		if !ok || fp.Topic != c.topic || p == nil || p.done {
			return
		}
		ok = c.cutPartition(p, fp.Records)
		if lag := p.m.lag(fp.HighWatermark, p.End, p.Start); lag >= 0 {
			if _, reading := c.c.next[p.ID]; reading {
				c.c.lag[p.ID] = lag
			}
		}
	})
	return ok
}

// cutPartition emits recs, the records of one fetch of partition p, in
// batches of at most c.size records. Transaction markers are covered by a
// batch's range, never emitted.
func (c *call) cutPartition(p *partRead, recs []*kgo.Record) bool {
	b := c.batch(p, len(recs))
	covered := p.Start - 1 // the last offset covered
	for i, rec := range recs {
		if rec.Offset < p.Start || p.atEnd {
			continue
		}
		if rec.Offset >= p.End {
			p.atEnd = true
			continue
		}
		covered = rec.Offset
		if rec.Attrs.IsControl() {
			continue
		}
		b.Records = append(b.Records, RecordOf(rec))
		if len(b.Records) == c.size {
			if !c.emit(p, &b, covered) {
				return false
			}
			b = c.batch(p, len(recs)-i-1)
		}
	}
	if covered >= p.Start {
		return c.emit(p, &b, covered)
	}
	return true
}

// batch starts p's next batch, with room for up to n records.
func (c *call) batch(p *partRead, n int) offsets.Batch {
	return offsets.Batch{Topic: c.topic, Partition: p.ID, Start: p.Start, Records: make([]offsets.Record, 0, min(n, c.size))}
}

// emit claims the offsets up to covered and emits b, which covers them.
func (c *call) emit(p *partRead, b *offsets.Batch, covered int64) bool {
	if !c.rt.TryClaim(claim{Partition: p.ID, Offset: covered}) {
		return false
	}
	b.End = covered + 1
	p.Start = b.End
	p.m.read(*b)
	c.send(*b)
	return true
}

// send emits b stamped with ingestion time, never behind the group's own
// watermark or the call's previous batch.
func (c *call) send(b offsets.Batch) {
	ts := max(mtime.Now(), c.last, mtime.Time(c.we.state))
	c.last, c.first = ts, min(c.first, ts)
	c.out(ts, b)
}

// ends finishes each bounded partition that the fetches read up to its
// End: the consumer drops it, and when the rest of its range holds no
// record to emit (the fetch reached the end without returning them:
// markers or aborted records), an empty batch covers it, so that the
// tables' offsets reach the end that was read. It returns false when a
// claim failed (a split).
func (c *call) ends() bool {
	for _, p := range c.parts {
		if p.done || p.End == unbounded || (!p.atEnd && p.Start < p.End) {
			continue
		}
		p.m.lagValue(0) // read up to the end taken at start
		if p.Start < p.End {
			if !c.rt.TryClaim(claim{Partition: p.ID, Offset: p.End - 1}) {
				return false
			}
			c.send(offsets.Batch{Topic: c.topic, Partition: p.ID, Start: p.Start, End: p.End})
			p.Start = p.End
		}
		p.done = true
		c.c.drop(p.ID)
	}
	return true
}
