package stop

import (
	"testing"
	"time"
)

// reset restores the process's stop state when the test ends: other tests
// of the package expect a process that was never stopped.
func reset(t *testing.T) {
	t.Helper()
	b, s := before.Load(), stopping.Load()
	t.Cleanup(func() { before.Store(b); stopping.Store(s) })
}

func TestNow(t *testing.T) {
	reset(t)
	if Requested() || Stopping() {
		t.Fatalf("before any stop: Requested %v, Stopping %v, want false, false", Requested(), Stopping())
	}
	constructed := time.Now().UnixNano()
	if Stopped(constructed) {
		t.Fatal("a source is stopped before any stop")
	}
	Now()
	after := time.Now().UnixNano() + 1
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"a source constructed before Now is stopped", Stopped(constructed), true},
		{"a source constructed after Now is not stopped", Stopped(after), false},
		{"Stopping after Now", Stopping(), true},
		{"Requested after Now", Requested(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// A process that runs a pipeline again after a clean stop (bronze, when
// partitions were added) is no longer stopping, but the sources of the
// stopped run stay stopped, and the stop stays requested.
func TestRunAgain(t *testing.T) {
	reset(t)
	constructed := time.Now().UnixNano()
	Now()
	RunAgain()
	if Stopping() {
		t.Error("Stopping after RunAgain")
	}
	if !Stopped(constructed) {
		t.Error("a source constructed before the stop runs again after RunAgain")
	}
	if !Requested() {
		t.Error("RunAgain forgot that a stop was requested")
	}
}
