package icebergio_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/transforms/offsets"
)

// deadCatalog is a catalog whose connection failed for good: every load
// fails, as a SQLite connection opened on a read-only file kept failing
// after the file was writable again.
type deadCatalog struct {
	catalog.Catalog
	loads *atomic.Int64
}

func (d deadCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	d.loads.Add(1)
	return nil, errors.New("attempt to write a readonly database (8)")
}

// A catalog connection that fails is opened again, not retried on for ever:
// the window commits once a fresh catalog works.
func TestCommitterReopensAFailedCatalog(t *testing.T) {
	sink, cat := testTable(t, "reopen")
	w1 := writeWindow(t, sink, 1, threeWindows()[0]...)
	var loads atomic.Int64
	c := icebergio.NewCommitter(deadCatalog{cat, &loads}, sink.Table.Ident, pipeline, offsets.Offsets{topic: {0: 0, 1: 0}}, nil)
	var opens atomic.Int64
	c.SetOpen(func(ctx context.Context) (catalog.Catalog, error) {
		opens.Add(1)
		return sink.Catalog.Open(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pending, _, done, err := c.Process(ctx, []icebergio.FileSet{w1}, nil)
	if err != nil || len(pending) != 0 {
		t.Fatalf("Process = %d pending, %v (loads on the dead catalog %d, opens %d): the failed catalog was not reopened",
			len(pending), err, loads.Load(), opens.Load())
	}
	if diff := cmp.Diff([]string{outcome(1, "committed", 14)}, outcomes(done)); diff != "" {
		t.Fatalf("commits (-want +got):\n%s", diff)
	}
	if loads.Load() != 1 || opens.Load() != 1 {
		t.Errorf("%d loads on the dead catalog and %d opens, want 1 and 1", loads.Load(), opens.Load())
	}
}
