package inject

import (
	"errors"
	"testing"
)

func TestAtAndCheck(t *testing.T) {
	point := BeforeCommit("lakehouse.t")
	if err := Check(point, 1); err != nil {
		t.Fatalf("Check with nothing set = %v, want nil", err)
	}
	boom := errors.New("boom")
	remove := At(point, func(n int) error {
		if n == 2 {
			return boom
		}
		return nil
	})
	if err := Check(point, 1); err != nil {
		t.Errorf("Check(1) = %v, want nil", err)
	}
	if err := Check(point, 2); !errors.Is(err, boom) {
		t.Errorf("Check(2) = %v, want %v", err, boom)
	}
	if err := Check(point, "2"); err != nil {
		t.Errorf("Check of another type = %v, want nil", err)
	}
	if err := Check(BeforeCommit("lakehouse.other"), 2); err != nil {
		t.Errorf("Check at another table's point = %v, want nil", err)
	}
	// A later At replaces the first; the first's remove leaves it.
	again := At(point, func(int) error { return boom })
	remove()
	if err := Check(point, 1); !errors.Is(err, boom) {
		t.Errorf("after the first remove, Check = %v, want the second function's %v", err, boom)
	}
	again()
	if err := Check(point, 2); err != nil {
		t.Errorf("after both removes, Check = %v, want nil", err)
	}
}
