package icebergio_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/transforms/offsets"
)

// Maintenance running over and over while a pipeline commits windows as
// fast as it can loses no row, duplicates none, and never moves the
// offsets: conflicts on either side mean reload and retry.
func TestMaintainConcurrentWithCommits(t *testing.T) {
	e := newMEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const windows = 24
	done := make(chan error, 1)
	go func() {
		for w := 1; w <= windows; w++ {
			if err := e.commitWindow(ctx, "bronze", mTopic, w, 15, 0, 1); err != nil {
				done <- fmt.Errorf("window %d: %w", w, err)
				return
			}
		}
		done <- nil
	}()
	opts := maintain.MaintainOptions{
		Compact:    maintain.CompactOptions{TargetFileSize: 1 << 20, MinInputFiles: 2},
		RetainLast: 2, ExpireOlderThan: time.Millisecond, OrphanOlderThan: time.Hour,
		Backoff: icebergio.Backoff{Initial: 5 * time.Millisecond, Max: 100 * time.Millisecond},
	}
	runs, compactions, attempts := 0, 0, 0
	prev := offsets.Offsets{}
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		rep, err := maintain.Maintain(ctx, e.cat, e.ident, opts, nil)
		if err != nil {
			t.Fatalf("maintenance run %d: %v", runs+1, err)
		}
		runs++
		if rep.Compact.Groups > 0 {
			compactions++
		}
		attempts += rep.Compact.Attempts + rep.Manifests.Attempts + rep.Expire.Attempts
		// The offsets never go back.
		cur, err := icebergio.CommittedOffsets(e.table(), "bronze")
		if err != nil {
			t.Fatal(err)
		}
		if prev.Ahead(cur) {
			t.Fatalf("run %d: offsets went back from %s to %s", runs, prev, cur)
		}
		prev = cur
	}
	t.Logf("%d maintenance runs, %d compactions, %d commit attempts", runs, compactions, attempts)
	if compactions == 0 {
		t.Errorf("no maintenance run compacted anything")
	}
	e.checkRows()
	if got, want := e.offsets()["bronze"], fmt.Sprintf("events/0=%d events/1=%d ", windows*15, windows*15); got != want {
		t.Fatalf("offsets %q, want %q", got, want)
	}
	// A last run leaves the table compacted and intact.
	if _, err := maintain.Maintain(ctx, e.cat, e.ident, opts, nil); err != nil {
		t.Fatal(err)
	}
	e.checkRows()
}

// ahead reports whether o holds a position that other does not reach.
func ahead(o, other offsets.Offsets) bool {
	for t, ps := range o {
		for p, v := range ps {
			if w, ok := other.Next(t, p); !ok || v > w {
				return true
			}
		}
	}
	return false
}
