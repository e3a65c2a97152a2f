package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Until(context.Background(), func() error {
		if calls++; calls < 4 {
			return fmt.Errorf("%d calls", calls)
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Errorf("Until = %v after %d calls, want nil after 4", err, calls)
	}
}

func TestUntilEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Until(ctx, func() error {
		if calls++; calls == 3 {
			cancel()
		}
		return errors.New("3 of 5 rows")
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "3 of 5 rows") {
		t.Errorf("Until = %v, want context.Canceled with the condition's last error", err)
	}
	if calls != 3 {
		t.Errorf("%d calls, want 3: none after the context ended", calls)
	}
}

// fatalTB records For's failure instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestForFailsWithTheLastError(t *testing.T) {
	tb := &fatalTB{TB: t}
	start := time.Now()
	For(tb, 50*time.Millisecond, func() error { return errors.New("no commit yet") })
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("For gave up after %v, before its timeout of 50ms", took)
	}
	if !strings.Contains(tb.msg, "not within 50ms") || !strings.Contains(tb.msg, "no commit yet") {
		t.Errorf("For failed with %q, want the timeout and the condition's last error", tb.msg)
	}
	tb.msg = ""
	For(tb, time.Minute, func() error { return nil })
	if tb.msg != "" {
		t.Errorf("For failed with %q on a condition that holds", tb.msg)
	}
}

func TestEveryWaitsItsInterval(t *testing.T) {
	var at []time.Time
	err := Every(context.Background(), 20*time.Millisecond, func() error {
		if at = append(at, time.Now()); len(at) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || len(at) != 3 {
		t.Fatalf("Every = %v after %d checks, want nil after 3", err, len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 20*time.Millisecond {
			t.Errorf("check %d came %v after the one before, want at least the interval of 20ms", i, gap)
		}
	}
}
