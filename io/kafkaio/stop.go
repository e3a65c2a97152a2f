package kafkaio

import (
	"sync"
	"sync/atomic"
	"time"
)

// stopBefore holds the time of the last Stop: reads constructed before it stop.
var stopBefore atomic.Int64

// Stop makes every read of this process that was constructed before now
// stop at its current position: each partition claims the rest of its
// restriction and returns, the watermark goes to the end of time, the last
// windows fire and commit, and the pipeline's run returns normally.
// Cancelling Prism's context instead crashes the process (docs/DESIGN.md, "Runners").
//
// Offsets not read yet are not lost: the tables' offsets say where the next
// run starts. Reads constructed after Stop are not affected.
func Stop() {
	stopBefore.Store(time.Now().UnixNano())
	stopHooks.Lock()
	hooks := stopHooks.fns
	stopHooks.Unlock()
	for _, fn := range hooks {
		fn()
	}
}

var stopHooks struct {
	sync.Mutex
	fns []func()
}

// OnStop makes Stop call fn, after the reads were told to stop: for a sink
// that must make its last commits durable (icebergio.Stopping).
func OnStop(fn func()) {
	stopHooks.Lock()
	defer stopHooks.Unlock()
	stopHooks.fns = append(stopHooks.fns, fn)
}

func stopped(constructed int64) bool { return constructed <= stopBefore.Load() }

// Stopped reports whether Stop was called in this process: a bounded read
// may then have ended before the end offsets it planned.
func Stopped() bool { return stopBefore.Load() != 0 }
