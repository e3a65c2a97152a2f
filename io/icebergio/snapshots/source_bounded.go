package snapshots

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/haade/haade/internal/stop"
	"github.com/haade/haade/io/icebergio"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func(beam.EventTime, SnapshotRows), error](&boundedSnapshotsFn{})
}

// boundedSnapshotsFn is a bounded ReadSnapshots: the snapshots of
// [Start, End) in one call. It is a plain DoFn, not a splittable one, so
// that Beam knows its output is bounded: a DoFn that may return a
// ProcessContinuation makes an unbounded PCollection whatever it does, and
// a bounded read must feed OverwriteDays, which refuses unbounded input.
type boundedSnapshotsFn struct {
	Catalog     icebergio.CatalogConfig
	Ident       string
	Start, End  int64
	Constructed int64 // unix nanos: a clean stop (internal/stop) after it stops the read
}

func (f *boundedSnapshotsFn) ProcessElement(ctx context.Context, _ []byte, emit func(beam.EventTime, SnapshotRows)) error {
	// A clean stop stops it before the next snapshot; what it did not
	// read stays for the next run, as for the unbounded read.
	running := func(any) bool { return !stop.Stopped(f.Constructed) }
	if !running(nil) {
		return nil
	}
	r := &snapshotsFn{Catalog: f.Catalog, Ident: f.Ident}
	_, err := r.read(ctx, f.Start, f.End, running, emit)
	return err
}
