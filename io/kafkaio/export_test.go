package kafkaio

import (
	"context"
	"sync"
	"time"
)

// fakeClock is a read's clock for tests: it stands still unless the test
// moves it (Advance) or a timer it gave out runs out. A timer of d still
// takes d of real time (the read waits for a fetch meanwhile), then moves
// the clock by d. It records every timer asked for, so that a test sees how
// long a call would have polled instead of timing it.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration // every timer's duration, in order
	fired int             // timers that ran out
	// started receives each timer's duration as it starts, when a test
	// waits for it (a call that polls).
	started chan time.Duration
}

// newFakeClock returns a fakeClock at the wall clock's time.
func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now(), started: make(chan time.Duration, 64)}
}

// withFakeClock gives f a new fakeClock and returns it.
func withFakeClock(f *readFn) *fakeClock {
	c := newFakeClock()
	f.clk = c
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d, as if d had passed.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	select {
	case c.started <- d:
	default:
	}
	ch := make(chan time.Time, 1)
	t := time.AfterFunc(d, func() {
		c.mu.Lock()
		c.now = c.now.Add(d)
		c.fired++
		now := c.now
		c.mu.Unlock()
		ch <- now
	})
	return ch, t.Stop
}

// timers returns the durations of the timers given out since the last
// call, and how many timers ran out since then.
func (c *fakeClock) timers() (waits []time.Duration, fired int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	waits, fired = c.waits, c.fired
	c.waits, c.fired = nil, 0
	return waits, fired
}

// planOnce opens cfg's topic, plans its read with o and closes the topic,
// as a pipeline does.
func planOnce(ctx context.Context, cfg Config, o PlanOpts, timeout time.Duration) (*Source, error) {
	t, err := Open(ctx, cfg, timeout)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Plan(ctx, o)
}
