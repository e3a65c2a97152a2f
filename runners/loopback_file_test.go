package runners

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// A run on --runner=direct leaves no beamloopbackworker-* file in the
// temporary directory (Beam's universal runner makes one per loopback job
// and leaves it), while a file of the same name that another process made
// stays.
func TestRunLeavesNoLoopbackFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	other := filepath.Join(tmp, "beamloopbackworker-another-process")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	beam.Create(s, "a", "b")
	if _, err := Run(context.Background(), "direct", p); err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "beamloopbackworker-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != other {
		t.Errorf("beamloopbackworker files after the run: %v; want only %s", left, other)
	}
}
