// Package wait is how a test waits for an event it cannot be told of: it
// checks the event itself (a row count, a log line, a file, a metric, a
// process gone) until it holds or a deadline passes. Tests wait with it
// instead of sleeping for a fixed time, and testing/layout allows no other
// time.Sleep in a test without a reason.
//
// Until and For check at once, then after 10 ms, and after twice as long
// each time up to 250 ms: a fast event is seen at once and a slow one is
// not checked more than four times a second. Every checks at a fixed
// interval, for conditions that cost.
package wait

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const (
	// first and most are Until's shortest and longest times between
	// checks.
	first = 10 * time.Millisecond
	most  = 250 * time.Millisecond
)

// Until runs cond until it returns nil or ctx ends, and returns nil or,
// when ctx ended first, ctx's error with cond's last error: what was not
// there yet.
func Until(ctx context.Context, cond func() error) error {
	return poll(ctx, first, most, cond)
}

// poll checks cond at once, then after d, doubling d up to longest.
func poll(ctx context.Context, d, longest time.Duration, cond func() error) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for ; ; d = min(2*d, longest) {
		err := cond()
		if err == nil {
			return nil
		}
		t.Reset(d)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// Every is Until for a condition that costs (a scan of a table, a query to
// a server): it checks at once, then every d.
func Every(ctx context.Context, d time.Duration, cond func() error) error {
	return poll(ctx, d, d, cond)
}

// For runs cond until it returns nil, and fails t (Fatal) with cond's last
// error if timeout passes first. cond may fail t itself, to stop waiting
// for an event that can no longer come (the process under test exited).
func For(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := Until(ctx, cond); err != nil {
		t.Fatalf("not within %v: %v", timeout, err)
	}
}
