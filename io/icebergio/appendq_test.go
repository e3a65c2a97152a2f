package icebergio

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The queue runs its jobs in order, on one goroutine, and wait returns
// only after the last one.
func TestAppendQueueOrder(t *testing.T) {
	q := newAppendQueue()
	var got []int
	for i := range 100 {
		if err := q.add(func() { got = append(got, i) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.wait(); err != nil {
		t.Fatal(err)
	}
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs ran out of order (-want +got):\n%s", diff)
	}
}

// A job that panics fails the bundle with an error that says so; later jobs
// do not run, and the bundle's goroutine is not killed.
func TestAppendQueuePanic(t *testing.T) {
	q := newAppendQueue()
	ran := false
	if err := q.add(func() { panic("index out of range") }); err != nil {
		t.Fatal(err)
	}
	q.sync()
	if err := q.add(func() { ran = true }); err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("add after a panic: %v, want the panic as an error", err)
	}
	if err := q.wait(); err == nil || !strings.Contains(err.Error(), "append rows: index out of range") {
		t.Errorf("wait: %v, want the panic as an error", err)
	}
	if ran {
		t.Error("a job ran after the one that panicked")
	}
}
