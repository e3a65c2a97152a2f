package stop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reset restores the process's stop state when the test ends: other tests
// of the package expect a process that was never stopped.
func reset(t *testing.T) {
	t.Helper()
	b := before.Load()
	t.Cleanup(func() {
		before.Store(b)
		ends.Lock()
		ends.m = map[string]func(context.Context) error{}
		ends.Unlock()
	})
}

func TestNow(t *testing.T) {
	reset(t)
	if Requested() {
		t.Fatal("Requested before any stop")
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

// record registers, under key, a function that appends key to *calls and
// returns err.
func record(calls *[]string, key string, err error) {
	AtEnd(key, func(context.Context) error {
		*calls = append(*calls, key)
		return err
	})
}

// After a stop, End calls what the run's sinks registered, once each, in
// key order, the last registration of a key replacing the earlier ones,
// and reports every error.
func TestEndAfterStop(t *testing.T) {
	reset(t)
	var calls []string
	failed := errors.New("catalog unreachable")
	record(&calls, "b", nil)
	record(&calls, "a", failed)
	AtEnd("b", func(context.Context) error { t.Error("a replaced registration was called"); return nil })
	record(&calls, "b", nil)
	Now()
	if err := End(context.Background()); !errors.Is(err, failed) {
		t.Errorf("End = %v, want %v", err, failed)
	}
	if diff := cmp.Diff([]string{"a", "b"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	calls = nil
	if err := End(context.Background()); err != nil || len(calls) > 0 {
		t.Errorf("a second End: %v, calls %v; want nil and none", err, calls)
	}
}

// A run that no stop ended records nothing at its end, and does not leave
// its registrations to the next run.
func TestEndWithoutStop(t *testing.T) {
	reset(t)
	var calls []string
	record(&calls, "a", nil)
	if err := End(context.Background()); err != nil || len(calls) > 0 {
		t.Errorf("End without a stop: %v, calls %v; want nil and none", err, calls)
	}
	Now()
	if err := End(context.Background()); err != nil || len(calls) > 0 {
		t.Errorf("End after a stop, of a registration an earlier End forgot: %v, calls %v", err, calls)
	}
}
