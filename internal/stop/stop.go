// Package stop is the clean stop of the pipelines that run in this
// process. It answers one runner behaviour: Prism runs a job's workers in
// the process that submits it, and cancelling the context of that job
// crashes the process. So a clean stop is process-wide state instead, which
// the io packages consult and the harness (runners.Stop) sets: the sinks
// see that the process is stopping (Stopping) and make their last offsets
// durable, and the sources constructed before the stop (Stopped) claim the
// rest of their restrictions, so the last windows commit and the run
// returns. On Flink a stop cancels the job, and none of this is read.
//
// The package imports nothing of the module, so that the harness and the
// io packages can both import it and the harness links only the io
// packages a pipeline uses: runners does not import io/. It is internal:
// a pipeline author stops through runners.Stop.
package stop

import (
	"sync/atomic"
	"time"
)

var (
	// before is the time of the last Now, in unix nanoseconds; 0: never.
	before atomic.Int64
	// stopping is set by Now and cleared by RunAgain.
	stopping atomic.Bool
)

// Now stops the pipelines of this process cleanly, in this order: first
// the sinks are told that the process is stopping (Stopping), then every
// source constructed until now stops at its current position (Stopped).
// What the sources did not read is not lost: the tables' offsets say where
// the next run starts. Sources constructed after Now are not affected.
func Now() {
	stopping.Store(true)
	before.Store(time.Now().UnixNano())
}

// Stopping reports whether the process is stopping cleanly: Now was called
// and RunAgain was not called since. A committer then records the offsets
// of every window without rows at once, instead of at most once per
// progress interval, so that a dead-letter table (which seldom has rows)
// does not keep offsets up to a minute old for the next start.
func Stopping() bool { return stopping.Load() }

// RunAgain undoes Stopping, for a process that runs a pipeline again
// after a clean stop of the previous one (bronze, when its topic gained
// partitions). Sources constructed before the stop stay stopped.
func RunAgain() { stopping.Store(false) }

// Stopped reports whether a source constructed at constructed (unix
// nanoseconds, time.Now().UnixNano() when the transform was built) must
// stop: Now was called at or after that time.
func Stopped(constructed int64) bool { return constructed <= before.Load() }

// Requested reports whether Now was ever called in this process: a bounded
// read may then have ended before the end it planned. RunAgain does not
// change it.
func Requested() bool { return before.Load() != 0 }
