package kafkaio

import (
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
func Stop() { stopBefore.Store(time.Now().UnixNano()) }

func stopped(constructed int64) bool { return constructed <= stopBefore.Load() }

// Stopped reports whether Stop was called in this process: a bounded read
// may then have ended before the end offsets it planned.
func Stopped() bool { return stopBefore.Load() != 0 }
