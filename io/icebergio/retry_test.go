package icebergio

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestJitterStaysWithinHalfAndVaries(t *testing.T) {
	d := 800 * time.Millisecond
	seen := map[time.Duration]bool{}
	for range 200 {
		j := jitter(d)
		if j < d/2 || j > d {
			t.Fatalf("jitter(%v) = %v, want within [%v, %v]", d, j, d/2, d)
		}
		seen[j] = true
	}
	// Two committers that fail together must not retry in lockstep.
	if len(seen) < 100 {
		t.Errorf("200 jittered waits took only %d distinct values", len(seen))
	}
	if got := jitter(0); got != 0 {
		t.Errorf("jitter(0) = %v", got)
	}
}

func TestRetryRetriesUntilSuccessAndStopsOnPermanent(t *testing.T) {
	ctx := context.Background()
	b := Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}
	calls := 0
	err := Retry(ctx, b, "op", "t", func() error {
		calls++
		if calls < 5 {
			return errors.New("transient")
		}
		return nil
	})
	if err != nil || calls != 5 {
		t.Errorf("retry = %v after %d calls, want nil after 5", err, calls)
	}
	boom := errors.New("boom")
	calls = 0
	err = Retry(ctx, b, "op", "t", func() error { calls++; return Permanent(boom) })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("retry = %v after %d calls, want boom after 1", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = Retry(cctx, b, "op", "t", func() error {
		calls++
		if calls == 3 {
			cancel()
		}
		return errors.New("down")
	})
	if err == nil || calls != 3 {
		t.Errorf("retry after cancel = %v after %d calls, want the last error after 3", err, calls)
	}
}
