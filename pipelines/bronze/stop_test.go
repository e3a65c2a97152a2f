package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/offsets"
)

// At a clean stop the dead-letter table, which had no rows for the last
// windows, records every offset read, so the next start does not read
// again what the tables already hold. Before, it kept the offsets of its
// last progress record (up to a minute old).
func TestCleanStopRecordsDeadLetterProgress(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(kafkatest.Sample(300, 5, 0, nil)) // valid events only: no dead letter
	r := e.startStreaming(t)
	r.waitRows(e.count())
	cat, err := e.cfg.Catalog.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The dead letters' first progress record is behind us: the next one
	// is a minute away.
	wait.For(t, time.Minute, func() error {
		st, err := icebergio.Stat(context.Background(), cat, e.cfg.DLQTable, e.cfg.Pipeline)
		if err == nil && len(st.Offsets) == 0 {
			err = errors.New("the dead-letter table records no offsets yet")
		}
		return err
	})
	e.produce(kafkatest.Sample(300, 6, 0, nil))
	r.waitRows(e.count())
	r.stop()
	e.checkExactlyOnce(badSet())
	want := offsets.Offsets{}
	for p, offs := range e.produced {
		want.Set(e.cfg.Kafka.Topic, int32(p), int64(len(offs)))
	}
	for _, ident := range []string{e.cfg.Table, e.cfg.DLQTable} {
		st, err := icebergio.Stat(context.Background(), cat, ident, e.cfg.Pipeline)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, st.Offsets); diff != "" {
			t.Errorf("%s offsets after the clean stop (-want +got):\n%s", ident, diff)
		}
	}
}
