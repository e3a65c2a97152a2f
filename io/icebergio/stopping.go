package icebergio

import "sync/atomic"

// stopping is set by Stopping: the process is stopping cleanly.
var stopping atomic.Bool

// Stopping tells the committers of this process that it is stopping
// cleanly (SIGTERM): from now on, every window without rows for a table
// records its offsets in the table's progress property at once, instead of
// at most once per Sink.ProgressEvery. Without it, a dead-letter table
// (which seldom has rows) kept offsets up to a minute old, and the next
// start read everything since again. It works where the committer runs in
// this process (Prism); on Flink a stop cancels the job.
func Stopping() { stopping.Store(true) }

// Running undoes Stopping, for a process that runs a pipeline again after
// a clean stop of the previous one (bronze, when partitions were added).
func Running() { stopping.Store(false) }
