package icebergio

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Backoff bounds the waits between retries. A server that goes away means
// retry and wait, never skip: retries go on until the context ends.
type Backoff struct {
	// Initial wait. Default 100ms.
	Initial time.Duration
	// Max wait between two tries. Default 30s.
	Max time.Duration
}

var defaultBackoff = Backoff{Initial: 100 * time.Millisecond, Max: 30 * time.Second}

// Retry calls fn until it succeeds, fn says the error is permanent (by
// returning it wrapped with Permanent), or ctx ends, waiting as b says
// between tries (a zero Backoff: 100ms doubling to 30s). Each retry is
// logged and counted in haade_retries_total under table and op.
func Retry(ctx context.Context, b Backoff, op, table string, fn func() error) error {
	if b.Initial <= 0 {
		b.Initial = defaultBackoff.Initial
	}
	if b.Max <= 0 {
		b.Max = defaultBackoff.Max
	}
	wait := b.Initial
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if p, ok := err.(permanentError); ok {
			return p.err
		}
		retries.WithLabelValues(table, op).Inc()
		sleep := jitter(wait)
		slog.Warn("retrying", "op", op, "table", table, "attempt", attempt, "wait", sleep, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(sleep):
		}
		wait *= 2
		if wait > b.Max {
			wait = b.Max
		}
	}
}

// jitter returns a random wait in [d/2, d]: the committers of bronze and
// its dead-letter table fail together when their catalog comes back, and
// with equal waits they kept retrying in lockstep and colliding.
func jitter(d time.Duration) time.Duration {
	if d < 2 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying: Retry returns it at once.
func Permanent(err error) error { return permanentError{err} }
