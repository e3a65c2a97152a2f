package kafkaio

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// directRead returns a readFn and a group of one unbounded partition of an
// empty topic, called directly (no runner), with a shared watermark table.
func directRead(t *testing.T) (*readFn, Group) {
	t.Helper()
	cfg := startKafka(t, 1)
	cfg.CallDuration = 300 * time.Millisecond
	cfg = cfg.withDefaults()
	p := Group{Parts: []Partition{{ID: 0, Start: 0, End: unbounded}}}
	f := &readFn{Cfg: cfg, ReadID: uniqueName(t), Constructed: time.Now().UnixNano()}
	registerGroups(f.ReadID, []Group{p})
	t.Cleanup(func() { f.Teardown(); forgetRead(f.ReadID) })
	f.Setup()
	return f, p
}

func noEmit(beam.EventTime, offsets.Batch) {}

// TestReadCallAdvancesWatermark: an idle call ends by moving the
// partition's watermark to the time it ended.
func TestReadCallAdvancesWatermark(t *testing.T) {
	f, p := directRead(t)
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	before := mtime.Now()
	pc, err := f.ProcessElement(context.Background(), we, rt, p, noEmit)
	if err != nil || !pc.ShouldResume() {
		t.Fatalf("ProcessElement = %v, %v; want a resume", pc, err)
	}
	if got := minWatermark(f.ReadID, mtime.MaxTimestamp); got < before {
		t.Errorf("watermark %v after an idle call, want at least %v", got, before)
	}
}

// TestSplitPrimaryKeepsWatermark: Prism splits a bundle that makes no
// progress (an idle partition) and schedules the residual at once, while
// the primary call still runs. The residual then owns the partition: it
// may emit records in a bundle still running, so the primary must not
// move the partition's shared watermark past them when its call ends.
func TestSplitPrimaryKeepsWatermark(t *testing.T) {
	f, p := directRead(t)
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	clk := withFakeClock(f)
	split := make(chan any, 1)
	go func() {
		<-clk.started // the call polls: Prism splits it now
		_, residual, _ := rt.TrySplit(0.5)
		split <- residual
	}()
	pc, err := f.ProcessElement(context.Background(), we, rt, p, noEmit)
	if err != nil {
		t.Fatal(err)
	}
	var r any
	select {
	case r = <-split:
	case <-time.After(10 * time.Second):
		t.Fatal("the call returned without polling: no split was made while it ran")
	}
	if !cmp.Equal(r, groupRestriction{Parts: []Partition{{ID: 0, Start: 0, End: unbounded}}}) {
		t.Fatalf("residual %v, want the whole partition", r)
	}
	if pc.ShouldResume() {
		t.Errorf("the split primary asks to resume")
	}
	if got := minWatermark(f.ReadID, mtime.MaxTimestamp); got != mtime.MinTimestamp {
		t.Errorf("the split primary moved the partition's watermark to %v", got)
	}
}

// TestFinishAfterSplit: a clean stop makes a call finish its restriction; a
// primary that was split meanwhile leaves the watermark to its residual.
func TestFinishAfterSplit(t *testing.T) {
	for _, split := range []bool{false, true} {
		f, p := directRead(t)
		r := f.CreateInitialRestriction(p)
		rt := f.CreateTracker(r)
		we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
		we.read, we.group = f.ReadID, p.ID // as ProcessElement sets them
		rt.TryClaim(claim{Partition: 0, Offset: 4})
		want := mtime.MaxTimestamp
		if split {
			rt.TrySplit(0.5)
			want = mtime.MinTimestamp
		}
		if pc, err := f.finish(rt, we, r.Parts, mtime.MaxTimestamp); err != nil || pc.ShouldResume() {
			t.Fatalf("finish = %v, %v", pc, err)
		}
		if !rt.IsDone() || rt.GetError() != nil {
			t.Errorf("split %v: tracker done %v, err %v", split, rt.IsDone(), rt.GetError())
		}
		if got := minWatermark(f.ReadID, mtime.MaxTimestamp); got != want {
			t.Errorf("split %v: watermark %v after finish, want %v", split, got, want)
		}
	}
}

// TestReadCallPublishesFirstRecord: a call's records reach the runner only
// when its bundle ends, after the call returns, and meanwhile another
// partition's bundle may end and report the minimum of the table. So a call
// that emitted records publishes the stamp of its first batch, not its end;
// the next call, started only after the runner committed the bundle,
// publishes the previous call's end.
func TestReadCallPublishesFirstRecord(t *testing.T) {
	f, p := directRead(t)
	cl := client(t, Config{Brokers: f.Cfg.Brokers, Topic: topic})
	produce(t, cl, "v", map[int32]int{0: 5})
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	var stamps []mtime.Time
	pc, err := f.ProcessElement(context.Background(), we, rt, p, func(ts beam.EventTime, b offsets.Batch) { stamps = append(stamps, ts) })
	if err != nil || !pc.ShouldResume() || len(stamps) == 0 {
		t.Fatalf("ProcessElement = %v, %v with %d batches; want a resume after some batches", pc, err, len(stamps))
	}
	if got := minWatermark(f.ReadID, mtime.MaxTimestamp); got != stamps[0] {
		t.Errorf("published %v after a call that emitted from %v, want the first stamp", got, stamps[0])
	}
	end := mtime.Time(we.state)
	if end < stamps[len(stamps)-1] {
		t.Errorf("own watermark %v is behind the last stamp %v", end, stamps[len(stamps)-1])
	}

	// The runner committed the bundle and resumes the residual.
	_, residual, err := rt.TrySplit(0)
	if err != nil || residual == nil {
		t.Fatalf("checkpoint: %v, %v", residual, err)
	}
	rt2 := f.CreateTracker(residual.(groupRestriction))
	we2 := f.CreateWatermarkEstimator(f.WatermarkEstimatorState(we))
	if _, err := f.ProcessElement(context.Background(), we2, rt2, p, noEmit); err != nil {
		t.Fatal(err)
	}
	if got := minWatermark(f.ReadID, mtime.MaxTimestamp); got < end {
		t.Errorf("published %v after the next call, want at least the previous call's end %v", got, end)
	}
}

// TestLiveCallEndsCaughtUp: a live call returns once a poll has read its
// partition up to the log's end, instead of polling on until its
// CallDuration, and asks to resume after CaughtUpWait (records may be
// arriving; not at once, which would make a bundle, and files, per poll).
// Prism runs the calls of every partition in one bundle, one after
// another: 250 ms each held a live stream's windows back by 2 s.
func TestLiveCallEndsCaughtUp(t *testing.T) {
	f, p := directRead(t)
	produce(t, client(t, f.Cfg), "live", map[int32]int{0: 100})
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	clk := withFakeClock(f)
	var n int
	f.StartBundle(noEmit)
	pc, err := f.ProcessElement(context.Background(), we, rt, p, func(_ beam.EventTime, b offsets.Batch) { n += len(b.Records) })
	if err != nil || !pc.ShouldResume() || pc.ResumeDelay() != f.Cfg.CaughtUpWait {
		t.Fatalf("ProcessElement = %+v, %v; want a resume after CaughtUpWait %v", pc, err, f.Cfg.CaughtUpWait)
	}
	if n != 100 {
		t.Errorf("emitted %d records, want 100", n)
	}
	if waits, fired := clk.timers(); fired != 0 {
		t.Errorf("%d of the call's polls (%v) waited until their deadline with the partition caught up; its CallDuration is %v",
			fired, waits, f.Cfg.CallDuration)
	}
}

// TestLiveCallsShareTheBundle: the live calls of one bundle share one
// CallDuration; a call that starts when it is spent polls only briefly.
func TestLiveCallsShareTheBundle(t *testing.T) {
	f, p := directRead(t)
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	clk := withFakeClock(f)
	f.StartBundle(noEmit)
	clk.Advance(f.Cfg.CallDuration) // the bundle's other partitions took it all
	pc, err := f.ProcessElement(context.Background(), we, rt, p, noEmit)
	if err != nil || !pc.ShouldResume() {
		t.Fatalf("ProcessElement = %+v, %v; want a resume", pc, err)
	}
	if waits, _ := clk.timers(); !slices.Equal(waits, []time.Duration{minLiveCall}) {
		t.Errorf("a call in a spent bundle polled for %v, want one poll of the floor %v; CallDuration %v", waits, minLiveCall, f.Cfg.CallDuration)
	}
	// A new bundle's call has its whole CallDuration: on an idle partition
	// it polls until it ends.
	f.StartBundle(noEmit)
	if _, err := f.ProcessElement(context.Background(), we, rt, p, noEmit); err != nil {
		t.Fatal(err)
	}
	if waits, fired := clk.timers(); !slices.Equal(waits, []time.Duration{f.Cfg.CallDuration}) || fired != 1 {
		t.Errorf("an idle call of a new bundle polled for %v (%d ran out), want one poll of its whole CallDuration %v, to its end",
			waits, fired, f.Cfg.CallDuration)
	}
}

// TestBehindCallEndsCaughtUp: a call that found its partition far behind,
// and so reads for up to BehindCallDuration, still returns as soon as it has
// read up to the log's end, as a live call does: it does not wait for an
// empty poll (the fetch's wait) first. Prism runs a bundle's calls one
// after another, so a backlog's last bundle waited for one empty poll per
// partition before its files could commit.
func TestBehindCallEndsCaughtUp(t *testing.T) {
	f, p := directRead(t)
	f.Cfg.BehindRecords = 10
	f.Cfg.BatchSize = 100
	produce(t, client(t, f.Cfg), "backlog", map[int32]int{0: 2_000})
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	var n int
	f.StartBundle(noEmit)
	pc, err := f.ProcessElement(context.Background(), we, rt, p, func(_ beam.EventTime, b offsets.Batch) { n += len(b.Records) })
	if err != nil || !pc.ShouldResume() {
		t.Fatalf("ProcessElement = %+v, %v; want a resume", pc, err)
	}
	if n != 2_000 {
		t.Errorf("emitted %d records, want the whole backlog of 2000", n)
	}
	if pc.ResumeDelay() != f.Cfg.CaughtUpWait {
		t.Errorf("resume in %v, want CaughtUpWait %v: the call ended on an empty poll, not once it had caught up (IdleWait is %v)",
			pc.ResumeDelay(), f.Cfg.CaughtUpWait, f.Cfg.IdleWait)
	}
}

// TestMissedFetchIsNotIdle: a call that gets no poll before its deadline
// because its client's first fetch has not come back (here the broker
// holds every fetch 200 ms; on Prism, a call given the 10 ms floor of a spent
// bundle) resumes at once, not after IdleWait: the partition may be far
// behind, and a residual that waits misses the next bundle. A second call
// in a row that gets nothing is idle.
func TestMissedFetchIsNotIdle(t *testing.T) {
	c, err := kafkatest.Start(topic, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// A whole call (1 s) outlasts the held fetch with room to spare on a
	// loaded machine; the spent bundle's 10 ms floor does not.
	cfg := Config{Brokers: c.Brokers(), Topic: topic, CallDuration: time.Second}.withDefaults()
	produce(t, client(t, cfg), "slow", map[int32]int{0: 100})
	c.ControlKey(kmsg.Fetch.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.SleepControl(func() { time.Sleep(200 * time.Millisecond) })
		return nil, nil, false // then answered as usual
	})
	p := Group{Parts: []Partition{{ID: 0, Start: 0, End: unbounded}}}
	f := &readFn{Cfg: cfg, ReadID: uniqueName(t), Constructed: time.Now().UnixNano()}
	registerGroups(f.ReadID, []Group{p})
	t.Cleanup(func() { f.Teardown(); forgetRead(f.ReadID) })
	f.Setup()
	clk := withFakeClock(f)
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	var n int
	emit := func(_ beam.EventTime, b offsets.Batch) { n += len(b.Records) }

	f.StartBundle(noEmit)
	clk.Advance(cfg.CallDuration) // the bundle's other partitions took it all
	pc, err := f.ProcessElement(context.Background(), we, rt, p, emit)
	if err != nil || !pc.ShouldResume() || pc.ResumeDelay() != 0 {
		t.Fatalf("a call on a new client in a spent bundle: ProcessElement = %+v, %v; want a resume at once (IdleWait is %v)", pc, err, cfg.IdleWait)
	}
	if n != 0 {
		t.Fatalf("emitted %d records before the delayed fetch came back", n)
	}
	f.StartBundle(noEmit)
	if _, err := f.ProcessElement(context.Background(), we, rt, p, emit); err != nil {
		t.Fatal(err)
	}
	if n != 100 {
		t.Fatalf("the next call emitted %d records, want the 100 produced", n)
	}
	// Caught up now: the residual's call (the runner resumes at the
	// position reached) that gets nothing is idle at once.
	rt = f.CreateTracker(groupRestriction{Parts: []Partition{{ID: 0, Start: 100, End: unbounded}}})
	f.StartBundle(noEmit)
	pc, err = f.ProcessElement(context.Background(), we, rt, p, emit)
	if err != nil || pc.ResumeDelay() != cfg.IdleWait {
		t.Errorf("a caught-up call that got nothing: ProcessElement = %+v, %v; want a resume after IdleWait %v", pc, err, cfg.IdleWait)
	}
}

// TestNewClientOnEmptyPartitionGoesIdle: on a partition with nothing to
// read, a new client's first empty call resumes at once (its fetch may just
// be late), and the second is idle: an idle stream does not spin.
func TestNewClientOnEmptyPartitionGoesIdle(t *testing.T) {
	f, p := directRead(t)
	rt := f.CreateTracker(f.CreateInitialRestriction(p))
	we := f.CreateWatermarkEstimator(int64(mtime.MinTimestamp))
	var delays []time.Duration
	for range 3 {
		f.StartBundle(noEmit)
		pc, err := f.ProcessElement(context.Background(), we, rt, p, noEmit)
		if err != nil || !pc.ShouldResume() {
			t.Fatalf("ProcessElement = %+v, %v; want a resume", pc, err)
		}
		delays = append(delays, pc.ResumeDelay())
	}
	if want := []time.Duration{0, f.Cfg.IdleWait, f.Cfg.IdleWait}; !slices.Equal(delays, want) {
		t.Errorf("resume delays of three empty calls = %v, want %v", delays, want)
	}
}
