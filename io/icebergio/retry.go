package icebergio

import (
	"context"
	"log/slog"
	"time"

	"github.com/haade/haade/runners/obs"
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

// retry calls fn until it succeeds, fn says the error is permanent (by
// returning it wrapped in permanent), or ctx ends.
func retry(ctx context.Context, b Backoff, op, table string, fn func() error) error {
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
		obs.Retries.WithLabelValues(table, op).Inc()
		slog.Warn("retrying", "op", op, "table", table, "attempt", attempt, "wait", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
		if wait > b.Max {
			wait = b.Max
		}
	}
}

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }

func permanent(err error) error { return permanentError{err} }
