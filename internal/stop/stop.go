// Package stop is the clean stop of the pipelines that run in this
// process. It answers one runner behaviour: Prism runs a job's workers in
// the process that submits it, and cancelling the context of that job
// crashes the process. So a clean stop is process-wide state instead, which
// the io packages consult and the harness (runners.Stop) sets: the sources
// constructed before the stop (Stopped) claim the rest of their
// restrictions, so the last windows commit and the run returns; then the
// harness calls End, and the sinks make durable what they had not yet
// recorded (AtEnd). On Flink a stop cancels the job, and none of this is
// read.
//
// The package imports nothing of the module, so that the harness and the
// io packages can both import it and the harness links only the io
// packages a pipeline uses: runners does not import io/. It is internal:
// a pipeline author stops through runners.Stop.
package stop

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

var (
	// before is the time of the last Now, in unix nanoseconds; 0: never.
	before atomic.Int64

	// ends holds the functions that AtEnd registered, by key.
	ends = struct {
		sync.Mutex
		m map[string]func(context.Context) error
	}{m: map[string]func(context.Context) error{}}
)

// Now stops the pipelines of this process cleanly: every source
// constructed until now stops at its current position (Stopped). What the
// sources did not read is not lost: the tables' offsets say where the next
// run starts. Sources constructed after Now are not affected.
func Now() { before.Store(time.Now().UnixNano()) }

// Stopped reports whether a source constructed at constructed (unix
// nanoseconds, time.Now().UnixNano() when the transform was built) must
// stop: Now was called at or after that time.
func Stopped(constructed int64) bool { return constructed <= before.Load() }

// Requested reports whether Now was ever called in this process: a bounded
// read may then have ended before the end it planned.
func Requested() bool { return before.Load() != 0 }

// AtEnd registers f, under key, for End: what a sink does once the run
// that a clean stop ended has returned. A committer records there the
// offsets of the last windows it processed without rows for its table,
// which it records at most once per progress interval while it runs, so
// that a table that seldom has rows (dead letters) does not keep offsets up
// to an interval old for the next start. A later AtEnd with the same key
// replaces f.
func AtEnd(key string, f func(context.Context) error) {
	ends.Lock()
	defer ends.Unlock()
	ends.m[key] = f
}

// End is called by the harness when an in-process run has returned
// without error. If a stop was requested in this process (Requested), it
// calls the functions registered with AtEnd, in key order, and returns
// their errors joined; either way it forgets them, so the next run
// registers its own.
func End(ctx context.Context) error {
	ends.Lock()
	m := ends.m
	ends.m = map[string]func(context.Context) error{}
	ends.Unlock()
	if !Requested() {
		return nil
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		errs = append(errs, m[k](ctx))
	}
	return errors.Join(errs...)
}
