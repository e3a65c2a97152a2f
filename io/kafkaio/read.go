package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	register.DoFn5x2[context.Context, *watermarkEstimator, *sdf.LockRTracker, Group,
		func(beam.EventTime, offsets.Batch), sdf.ProcessContinuation, error](&readFn{})
	register.Emitter2[beam.EventTime, offsets.Batch]()
	register.DoFn2x0[[]byte, func(Group)](&groupsFn{})
	register.Emitter1[Group]()
}

// Read reads the topic of src, planned by Topic.Plan, and returns
// PCollection<offsets.Batch>: each batch holds records of one partition,
// and a partition's batches tile its range in src in order. Element
// timestamps are ingestion time. The read is unbounded unless every
// partition has an end.
//
// Each group of src is one element, read by one franz-go client, with one
// restriction that holds an offset range per partition. A call reads for
// at most Config.CallDuration, then self-checkpoints; the runner splits
// only at the current position of every partition.
func Read(s beam.Scope, src *Source) beam.PCollection {
	s = s.Scope("kafkaio.Read")
	if src.cfg.Topic == "" {
		panic(fmt.Errorf("%w: kafkaio.Read of a Source that Topic.Plan did not make", ErrConfig))
	}
	if err := checkGroups(src.Groups); err != nil {
		panic(err)
	}
	return read(s, src.cfg, src.Groups)
}

// read wires the read of groups of cfg.Topic; cfg is valid.
func read(s beam.Scope, cfg Config, groups []Group) beam.PCollection {
	cfg.exportPassword() // the DoFn carries none
	now := time.Now().UnixNano()
	id := fmt.Sprintf("%s@%d", cfg.Topic, now)
	// Registered in the constructing process: a worker that finds the entry
	// runs in this process (Prism, loopback) and shares the minimum.
	registerGroups(id, groups)
	imp := beam.Impulse(s)
	gs := beam.ParDo(s, &groupsFn{Groups: groups}, imp)
	return beam.ParDo(s, &readFn{Cfg: cfg.withDefaults(), ReadID: id, Constructed: now}, gs)
}

// checkGroups refuses groups that share an ID or a partition: each
// partition must be read by one group, once.
func checkGroups(groups []Group) error {
	ids, parts := map[int32]bool{}, map[int32]bool{}
	for _, g := range groups {
		if ids[g.ID] {
			return fmt.Errorf("%w: two groups with ID %d", ErrConfig, g.ID)
		}
		ids[g.ID] = true
		for _, p := range g.Parts {
			if parts[p.ID] {
				return fmt.Errorf("%w: partition %d is in two groups", ErrConfig, p.ID)
			}
			parts[p.ID] = true
		}
	}
	return nil
}

type groupsFn struct {
	Groups []Group
}

func (f *groupsFn) ProcessElement(_ []byte, emit func(Group)) {
	for _, g := range f.Groups {
		emit(g)
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
	// clk times the calls and their polls; nil is the wall clock (a test
	// sets its own, export_test.go).
	clk clock
}

// clock is what times a read's calls: how long each may poll, and when a
// bundle's budget is spent.
type clock interface {
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a stop
	// that releases the timer when it is not needed any more.
	Timer(d time.Duration) (<-chan time.Time, func() bool)
}

// wallClock is the time of the machine.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// clock is the read's clock.
func (f *readFn) clock() clock {
	if f.clk == nil {
		return wallClock{}
	}
	return f.clk
}

// StartBundle takes the emitter because Beam requires it of a DoFn whose
// ProcessElement emits.
func (f *readFn) StartBundle(func(beam.EventTime, offsets.Batch)) { f.bundleStart = f.clock().Now() }

func (f *readFn) Setup() {
	watermarks.Lock()
	f.shared = watermarks.m[f.ReadID] != nil
	watermarks.Unlock()
}

func (f *readFn) CreateInitialRestriction(g Group) groupRestriction {
	return groupRestriction{Parts: slices.Clone(g.Parts)}
}

func (f *readFn) SplitRestriction(_ Group, r groupRestriction) []groupRestriction {
	return []groupRestriction{r}
}

// RestrictionSize is the offsets left to read, an unbounded partition
// counting 1.
func (f *readFn) RestrictionSize(_ Group, r groupRestriction) float64 {
	var n float64
	for _, p := range r.Parts {
		if p.End == unbounded {
			n++
		} else {
			n += float64(p.End - p.Start)
		}
	}
	return n
}

func (f *readFn) CreateTracker(r groupRestriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(newGroupTracker(r))
}

// TruncateRestriction (a drain) leaves every partition an empty range at
// its start.
func (f *readFn) TruncateRestriction(rt *sdf.LockRTracker, _ Group) groupRestriction {
	var out groupRestriction
	for _, p := range rt.GetRestriction().(groupRestriction).Parts {
		out.Parts = append(out.Parts, Partition{ID: p.ID, Start: p.Start, End: p.Start})
	}
	return out
}

func (f *readFn) InitialWatermarkEstimatorState(_ beam.EventTime, _ groupRestriction, _ Group) int64 {
	return int64(mtime.MinTimestamp)
}

func (f *readFn) CreateWatermarkEstimator(state int64) *watermarkEstimator {
	return &watermarkEstimator{state: state}
}

func (f *readFn) WatermarkEstimatorState(e *watermarkEstimator) int64 { return e.state }

func (f *readFn) ProcessElement(ctx context.Context, we *watermarkEstimator, rt *sdf.LockRTracker, g Group, emit func(beam.EventTime, offsets.Batch)) (sdf.ProcessContinuation, error) {
	if f.shared {
		we.read, we.group = f.ReadID, g.ID
		// The runner resumes a restriction only after it committed the
		// bundle that checkpointed it: the previous call's records are in.
		we.publish(mtime.Time(we.state))
	}
	r := rt.GetRestriction().(groupRestriction)
	if r.empty() {
		we.advance(mtime.MaxTimestamp)
		we.publish(mtime.MaxTimestamp)
		return sdf.StopProcessing(), nil
	}
	call := f.newCall(rt, we, r, emit)
	if stop.Stopped(f.Constructed) {
		return f.finish(rt, we, call.open(), mtime.MaxTimestamp)
	}
	c, err := takeConsumer(f.ReadID, f.Cfg, g.ID, call.open())
	if err != nil {
		return sdf.StopProcessing(), err
	}
	call.c = c
	clk := f.clock()
	started := clk.Now()
	// A live call ends once a poll leaves its group caught up, and the
	// live calls of one bundle share one CallDuration. Prism runs every
	// pending group's call in one bundle, one after another, and the
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
	behind := false // the call was made long: the group was far behind
	idle, caughtUp := false, false
	for clk.Now().Before(deadline) {
		if stop.Stopped(f.Constructed) {
			putConsumer(f.ReadID, g.ID, c)
			return f.finish(rt, we, call.open(), call.first)
		}
		fetches := c.poll(ctx, clk, deadline)
		if err := fetchError(fetches, f.Cfg.Topic, c.next); err != nil {
			closeConsumer(c)
			return sdf.StopProcessing(), err
		}
		c.took(fetches)
		split := !call.cut(fetches)
		empty := fetches.NumRecords() == 0
		recycle(fetches) // the batches hold what they need of them
		if split || !call.ends() {
			// The runner split the restriction at the positions reached:
			// the rest is the residual's, so nothing more may be emitted.
			putConsumer(f.ReadID, g.ID, c)
			return sdf.StopProcessing(), nil
		}
		if len(call.open()) == 0 {
			closeConsumer(c) // every partition is read to its end
			we.advance(mtime.MaxTimestamp)
			we.publish(call.first)
			return sdf.StopProcessing(), nil
		}
		if c.behind() > f.Cfg.BehindRecords && !behind {
			// Far behind (a backlog): read on for a long call. Fewer
			// self-checkpoints mean fewer bundles, fewer and larger files,
			// and less memory; a group that has caught up goes back to
			// short calls, which commit a live stream's windows sooner.
			behind = true
			deadline = started.Add(f.Cfg.BehindCallDuration)
		}
		if empty {
			// No poll came before the deadline. The group is idle only if
			// its last polls left it caught up, or if this is the second
			// call in a row to get nothing. Otherwise the fetch had not
			// come back yet: a new client's first one, or a call given
			// only the 10 ms floor of a spent bundle. Such a call resumes
			// at once; waiting IdleWait made the residual miss the next
			// bundle, and a backlog's partitions started seconds late (a
			// 10M run read two of eight after the other six).
			idle = c.caughtUp() || c.missed
			c.missed = true
			break
		}
		c.missed = false
		if c.caughtUp() {
			// What there was is read: let the bundle end, a long call
			// too. Prism runs a bundle's calls one after another, so a
			// backlog's last bundle waited for one empty poll (the fetch's
			// 200 ms wait) per group before its files could commit.
			caughtUp = true
			break
		}
	}
	putConsumer(f.ReadID, g.ID, c)
	// Everything this group emits from now on is stamped later than now.
	now := max(mtime.Now(), call.last)
	if rt.IsDone() {
		// The runner split the restriction at the positions while this
		// call waited, and may already run the residual, whose records in
		// a bundle not yet finished can be stamped before now. The
		// residual owns the rest of the group and its watermark. (now is
		// taken before this check: a split after it starts a residual
		// later.)
		return sdf.StopProcessing(), nil
	}
	we.advance(now)
	we.publish(min(call.first, now))
	switch {
	case idle:
		return sdf.ResumeProcessingIn(f.Cfg.IdleWait), nil
	case caughtUp:
		return sdf.ResumeProcessingIn(f.Cfg.CaughtUpWait), nil
	}
	return sdf.ResumeProcessingIn(0), nil
}

// finish ends the group at its current positions after a clean stop
// (runners.Stop, through internal/stop): it claims the rest of each
// partition of open so that the SDK sees the restriction fully processed.
// first is the stamp of the first batch this call emitted, if any.
func (f *readFn) finish(rt *sdf.LockRTracker, we *watermarkEstimator, open []Partition, first mtime.Time) (sdf.ProcessContinuation, error) {
	for _, p := range open {
		if !rt.TryClaim(claim{Partition: p.ID, Offset: p.End - 1}) {
			return sdf.StopProcessing(), nil // split meanwhile: the residual finishes the group
		}
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
// next is where each partition was to be read from.
func fetchError(fs kgo.Fetches, topic string, next map[int32]int64) error {
	for _, fe := range fs.Errors() {
		switch {
		case errors.Is(fe.Err, context.DeadlineExceeded), errors.Is(fe.Err, context.Canceled):
			continue
		case errors.Is(fe.Err, kerr.OffsetOutOfRange):
			return fmt.Errorf("%w: %s/%d at offset %d: %v", ErrOffsetOutOfRange, topic, fe.Partition, next[fe.Partition], fe.Err)
		default:
			slog.Error("kafka fetch failed", "topic", fe.Topic, "partition", fe.Partition, "err", fe.Err)
			return fmt.Errorf("kafkaio: fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
	}
	return nil
}

// minLiveCall is the least a live call may poll for when its bundle's
// CallDuration is spent already, so that every group of the bundle
// makes progress.
const minLiveCall = 10 * time.Millisecond
