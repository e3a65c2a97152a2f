package icebergio

import (
	"fmt"
	"sync"
)

// appendQueue runs a writer's Arrow appends on a goroutine of their own, in
// the order they were queued, so that the bundle's goroutine goes back to
// reading and parsing while the rows it has handed over become Arrow
// columns (and, every flushRows rows, Parquet files on a third goroutine).
//
// A bundle of Prism's read stage runs the read, the parse and the writers'
// ProcessElement on one goroutine, one partition after another; with the
// appends off it, the stage uses a second core. What the writer emits, and
// when, does not change: FinishBundle waits for the queue before it closes
// the files, so a bundle's FileSets still hold every row it was given.
//
// Elements are not copied: a DoFn must not change an element it emitted,
// and the queue reads each only until FinishBundle returns.
type appendQueue struct {
	jobs chan queued
	done chan struct{}

	mu  sync.Mutex
	err error // the first panic of a job, as an error
}

// appendQueueDepth is how many batches may wait for the append goroutine
// before the bundle's goroutine blocks: enough to ride out one Parquet
// flush, small enough that the rows waiting stay a few batches.
const appendQueueDepth = 8

// queued is one job of the queue; a marker (see sync) runs even after a
// failure.
type queued struct {
	job    func()
	marker bool
}

func newAppendQueue() *appendQueue {
	q := &appendQueue{jobs: make(chan queued, appendQueueDepth), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *appendQueue) run() {
	defer close(q.done)
	for j := range q.jobs {
		if !j.marker && q.failed() != nil {
			continue // drain: the bundle fails at wait
		}
		q.do(j.job)
	}
}

func (q *appendQueue) do(job func()) {
	defer func() {
		if r := recover(); r != nil {
			q.mu.Lock()
			if q.err == nil {
				q.err = fmt.Errorf("append rows: %v", r)
			}
			q.mu.Unlock()
		}
	}()
	job()
}

func (q *appendQueue) failed() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// add queues job, or returns the error of an earlier one.
func (q *appendQueue) add(job func()) error {
	if err := q.failed(); err != nil {
		return err
	}
	q.jobs <- queued{job: job}
	return nil
}

// wait runs every queued job to its end, stops the goroutine, and returns
// the first failure. The queue cannot be used after it.
func (q *appendQueue) wait() error {
	close(q.jobs)
	<-q.done
	return q.failed()
}

// sync waits until every job queued so far has run.
func (q *appendQueue) sync() {
	ran := make(chan struct{})
	q.jobs <- queued{job: func() { close(ran) }, marker: true}
	<-ran
}
