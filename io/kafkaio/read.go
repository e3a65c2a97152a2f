package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	register.DoFn5x2[context.Context, *watermarkEstimator, *sdf.LockRTracker, Partition,
		func(beam.EventTime, offsets.Batch), sdf.ProcessContinuation, error](&readFn{})
	register.Emitter2[beam.EventTime, offsets.Batch]()
	register.DoFn2x0[[]byte, func(Partition)](&partitionsFn{})
	register.Emitter1[Partition]()
}

// Read reads the partitions of cfg.Topic, each from its restriction (see
// Plan), and returns PCollection<offsets.Batch>. Element timestamps are ingestion
// time. The read is unbounded unless every partition has an end.
//
// Each partition is one element with one restriction. A call reads for at
// most cfg.CallDuration, then self-checkpoints; the runner splits only at
// the current position.
func Read(s beam.Scope, cfg Config, parts []Partition) beam.PCollection {
	s = s.Scope("kafkaio.Read")
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg.exportPassword() // the DoFn carries none
	now := time.Now().UnixNano()
	id := fmt.Sprintf("%s@%d", cfg.Topic, now)
	// Registered in the constructing process: a worker that finds the entry
	// runs in this process (Prism, loopback) and shares the minimum.
	registerPartitions(id, parts)
	imp := beam.Impulse(s)
	ps := beam.ParDo(s, &partitionsFn{Parts: parts}, imp)
	return beam.ParDo(s, &readFn{Cfg: cfg.withDefaults(), ReadID: id, Constructed: now}, ps)
}

type partitionsFn struct {
	Parts []Partition
}

func (f *partitionsFn) ProcessElement(_ []byte, emit func(Partition)) {
	for _, p := range f.Parts {
		emit(p)
	}
}

type readFn struct {
	Cfg         Config
	ReadID      string
	Constructed int64 // unix nanos: a clean stop (internal/stop) after it stops the read

	shared bool // the watermark table of this read lives in this process
	// bundleStart is when the current bundle started: the live calls of
	// one bundle share one CallDuration (see ProcessElement).
	bundleStart time.Time
}

// StartBundle takes the emitter because Beam requires it of a DoFn whose
// ProcessElement emits.
func (f *readFn) StartBundle(func(beam.EventTime, offsets.Batch)) { f.bundleStart = time.Now() }

func (f *readFn) Setup() {
	watermarks.Lock()
	f.shared = watermarks.m[f.ReadID] != nil
	watermarks.Unlock()
}

func (f *readFn) CreateInitialRestriction(p Partition) offsetrange.Restriction {
	return offsetrange.Restriction{Start: p.Start, End: p.End}
}

func (f *readFn) SplitRestriction(_ Partition, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (f *readFn) RestrictionSize(_ Partition, r offsetrange.Restriction) float64 {
	if r.End == unbounded {
		return 1
	}
	return float64(r.End - r.Start)
}

func (f *readFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(newPositionTracker(r))
}

func (f *readFn) TruncateRestriction(rt *sdf.LockRTracker, _ Partition) offsetrange.Restriction {
	start := rt.GetRestriction().(offsetrange.Restriction).Start
	return offsetrange.Restriction{Start: start, End: start}
}

func (f *readFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ offsetrange.Restriction, _ Partition) int64 {
	return int64(mtime.MinTimestamp)
}

func (f *readFn) CreateWatermarkEstimator(state int64) *watermarkEstimator {
	return &watermarkEstimator{state: state}
}

func (f *readFn) WatermarkEstimatorState(e *watermarkEstimator) int64 { return e.state }

func (f *readFn) ProcessElement(ctx context.Context, we *watermarkEstimator, rt *sdf.LockRTracker, p Partition, emit func(beam.EventTime, offsets.Batch)) (sdf.ProcessContinuation, error) {
	if f.shared {
		we.read, we.partition = f.ReadID, p.ID
		// The runner resumes a restriction only after it committed the
		// bundle that checkpointed it: the previous call's records are in.
		we.publish(mtime.Time(we.state))
	}
	r := rt.GetRestriction().(offsetrange.Restriction)
	if r.Start >= r.End {
		we.advance(mtime.MaxTimestamp)
		we.publish(mtime.MaxTimestamp)
		return sdf.StopProcessing(), nil
	}
	if stop.Stopped(f.Constructed) {
		return f.finish(rt, we, r, mtime.MaxTimestamp)
	}
	c, err := takeConsumer(f.ReadID, f.Cfg, p.ID, r.Start)
	if err != nil {
		return sdf.StopProcessing(), err
	}
	m := metricsFor(f.Cfg.Topic, p.ID)
	pos := r.Start // the first offset not yet covered by an emitted batch
	started := time.Now()
	// A live call ends once a poll leaves its partition caught up, and the
	// live calls of one bundle share one CallDuration. Prism runs every
	// pending partition's call in one bundle, one after another, and the
	// bundle's files and watermark only move on when the last call ends:
	// eight partitions reading 250 ms each held a live stream's window
	// for 2 s after it closed. Each call still polls at least once.
	deadline := started.Add(f.Cfg.CallDuration)
	if !f.bundleStart.IsZero() {
		budget := f.bundleStart.Add(f.Cfg.CallDuration)
		if floor := started.Add(minLiveCall); budget.Before(floor) {
			budget = floor
		}
		if budget.Before(deadline) {
			deadline = budget
		}
	}
	behind := false // the call was made long: the partition was far behind
	var last mtime.Time
	first := mtime.MaxTimestamp // the stamp of this call's first batch
	idle, caughtUp := false, false
	for time.Now().Before(deadline) {
		if stop.Stopped(f.Constructed) {
			putConsumer(f.ReadID, p.ID, c)
			return f.finish(rt, we, r, first)
		}
		fetches := c.poll(ctx, deadline)
		if err := fetchError(fetches, f.Cfg.Topic, p.ID, c.next); err != nil {
			closeConsumer(c)
			return sdf.StopProcessing(), err
		}
		b := offsets.Batch{Topic: f.Cfg.Topic, Partition: p.ID, Start: pos, Records: make([]offsets.Record, 0, fetches.NumRecords())}
		covered := pos - 1 // the last offset covered
		atEnd := false
		fetches.EachRecord(func(rec *kgo.Record) {
			if rec.Partition != p.ID || rec.Topic != f.Cfg.Topic {
				return
			}
			c.next = rec.Offset + 1
			if rec.Offset < pos || atEnd {
				return
			}
			if rec.Offset >= r.End {
				atEnd = true
				return
			}
			covered = rec.Offset
			if rec.Attrs.IsControl() {
				return // a transaction marker: covered, not emitted
			}
			b.Records = append(b.Records, RecordOf(rec))
		})
		if covered >= pos {
			if !rt.TryClaim(covered) {
				// The runner split the restriction at pos: the rest is the
				// residual's, so nothing of this batch may be emitted.
				putConsumer(f.ReadID, p.ID, c)
				return sdf.StopProcessing(), nil
			}
			b.End = covered + 1
			pos = b.End
			m.read(b)
			// Ingestion time, never behind the partition's own watermark.
			ts := max(mtime.Now(), last, mtime.Time(we.state))
			last, first = ts, min(first, ts)
			emit(ts, b)
		}
		lag := m.lag(fetches, r, pos)
		empty := fetches.NumRecords() == 0
		recycle(fetches) // b holds what it needs of them
		if lag > f.Cfg.BehindRecords && !behind {
			// Far behind (a backlog): read on for a long call. Fewer
			// self-checkpoints mean fewer bundles, fewer and larger files,
			// and less memory; a partition that has caught up goes back to
			// short calls, which commit a live stream's windows sooner.
			behind = true
			deadline = started.Add(f.Cfg.BehindCallDuration)
		}
		if r.End != unbounded && (atEnd || pos >= r.End) {
			m.lagValue(0) // read up to the end taken at start
			closeConsumer(c)
			if pos < r.End {
				if !rt.TryClaim(r.End - 1) {
					return sdf.StopProcessing(), nil
				}
				// The rest of the range holds no record to emit (the
				// fetch reached the end without returning them: markers
				// or aborted records). An empty batch covers it, so that
				// the tables' offsets reach the end that was read.
				ts := max(mtime.Now(), last, mtime.Time(we.state))
				first = min(first, ts)
				emit(ts, offsets.Batch{Topic: f.Cfg.Topic, Partition: p.ID, Start: pos, End: r.End})
			}
			we.advance(mtime.MaxTimestamp)
			we.publish(first)
			return sdf.StopProcessing(), nil
		}
		if empty {
			// No poll came before the deadline. The partition is idle
			// only if its last poll left it caught up, or if this is the
			// second call in a row to get nothing. Otherwise the fetch
			// had not come back yet: a new client's first one, or a call
			// given only the 10 ms floor of a spent bundle. Such a call
			// resumes at once; waiting IdleWait made the residual miss
			// the next bundle, and a backlog's partitions started seconds
			// late (a 10M run read two of eight after the other six).
			idle = c.lag == 0 || c.missed
			c.missed = true
			break
		}
		c.missed = false
		c.lag = lag
		if lag == 0 {
			// What there was is read: let the bundle end, a long call
			// too. Prism runs a bundle's calls one after another, so a
			// backlog's last bundle waited for one empty poll (the fetch's
			// 200 ms wait) per partition before its files could commit.
			caughtUp = true
			break
		}
	}
	putConsumer(f.ReadID, p.ID, c)
	// Everything this partition emits from now on is stamped later than now.
	now := max(mtime.Now(), last)
	if rt.IsDone() {
		// The runner split the restriction at the position while this call
		// waited, and may already run the residual, whose records in a
		// bundle not yet finished can be stamped before now. The residual
		// owns the rest of the partition and its watermark. (now is taken
		// before this check: a split after it starts a residual later.)
		return sdf.StopProcessing(), nil
	}
	we.advance(now)
	we.publish(min(first, now))
	switch {
	case idle:
		return sdf.ResumeProcessingIn(f.Cfg.IdleWait), nil
	case caughtUp:
		return sdf.ResumeProcessingIn(f.Cfg.CaughtUpWait), nil
	}
	return sdf.ResumeProcessingIn(0), nil
}

// finish ends the partition at its current position after a clean stop
// (runners.Stop, through internal/stop): it claims
// the rest of the restriction so that the SDK sees it fully processed.
// first is the stamp of the first batch this call emitted, if any.
func (f *readFn) finish(rt *sdf.LockRTracker, we *watermarkEstimator, r offsetrange.Restriction, first mtime.Time) (sdf.ProcessContinuation, error) {
	if !rt.TryClaim(r.End - 1) {
		return sdf.StopProcessing(), nil // split meanwhile: the residual finishes the partition
	}
	we.advance(mtime.MaxTimestamp)
	we.publish(first)
	return sdf.StopProcessing(), nil
}

func (f *readFn) Teardown() {
	closeRead(f.ReadID)
}

// fetchError returns the first error of fetches that is not the end of a
// poll's deadline. franz-go retries retriable broker errors itself, so what
// reaches here is not transient; an out-of-range offset is never reset.
func fetchError(fs kgo.Fetches, topic string, partition int32, at int64) error {
	for _, fe := range fs.Errors() {
		switch {
		case errors.Is(fe.Err, context.DeadlineExceeded), errors.Is(fe.Err, context.Canceled):
			continue
		case errors.Is(fe.Err, kerr.OffsetOutOfRange):
			return fmt.Errorf("%w: %s/%d at offset %d: %v", ErrOffsetOutOfRange, topic, partition, at, fe.Err)
		default:
			slog.Error("kafka fetch failed", "topic", fe.Topic, "partition", fe.Partition, "err", fe.Err)
			return fmt.Errorf("kafkaio: fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
	}
	return nil
}

// minLiveCall is the least a live call may poll for when its bundle's
// CallDuration is spent already, so that every partition of the bundle
// makes progress.
const minLiveCall = 10 * time.Millisecond
