package kafkaio

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/go-cmp/cmp"
)

func TestGroups(t *testing.T) {
	parts := func(ids ...int32) []Partition {
		var ps []Partition
		for _, id := range ids {
			ps = append(ps, Partition{ID: id, Start: int64(id), End: 100 + int64(id)})
		}
		return ps
	}
	ids := func(gs []Group) [][]int32 {
		var out [][]int32
		for i, g := range gs {
			if g.ID != int32(i) {
				t.Errorf("group %d has ID %d", i, g.ID)
			}
			var ps []int32
			for _, p := range g.Parts {
				ps = append(ps, p.ID)
			}
			out = append(out, ps)
		}
		return out
	}
	tests := []struct {
		name    string
		parts   []Partition
		readers int
		want    [][]int32
	}{
		{"fewer partitions than readers: one group each", parts(0, 1, 2), 8, [][]int32{{0}, {1}, {2}}},
		{"as many as readers", parts(0, 1, 2, 3), 4, [][]int32{{0}, {1}, {2}, {3}}},
		{"dealt round robin", parts(0, 1, 2, 3, 4, 5, 6), 3, [][]int32{{0, 3, 6}, {1, 4}, {2, 5}}},
		{"in partition order, whatever the input order", parts(5, 3, 1, 0, 4, 2), 2, [][]int32{{0, 2, 4}, {1, 3, 5}}},
		{"no readers given: DefaultReaders", parts(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 0, [][]int32{{0, 8}, {1, 9}, {2}, {3}, {4}, {5}, {6}, {7}}},
		{"one reader", parts(0, 1, 2), 1, [][]int32{{0, 1, 2}}},
		{"no partitions", nil, 4, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := deal(tc.parts, tc.readers)
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("deal (-want +got):\n%s", diff)
			}
			// Every partition once, with its range.
			in := map[int32]Partition{}
			for _, p := range tc.parts {
				in[p.ID] = p
			}
			for _, g := range got {
				for _, p := range g.Parts {
					if in[p.ID] != p {
						t.Errorf("partition %+v, want %+v", p, in[p.ID])
					}
					delete(in, p.ID)
				}
			}
			if len(in) > 0 {
				t.Errorf("partitions in no group: %v", in)
			}
		})
	}
	t.Run("1,024 partitions into 8", func(t *testing.T) {
		var ps []Partition
		for i := range 1024 {
			ps = append(ps, Partition{ID: int32(i), End: 10})
		}
		for _, g := range deal(ps, 8) {
			if len(g.Parts) != 128 {
				t.Errorf("group %d has %d partitions, want 128", g.ID, len(g.Parts))
			}
		}
	})
}

func TestReadRefusesOverlappingGroups(t *testing.T) {
	for _, gs := range [][]Group{
		{{ID: 0, Parts: []Partition{{ID: 1}}}, {ID: 0, Parts: []Partition{{ID: 2}}}},
		{{ID: 0, Parts: []Partition{{ID: 1}}}, {ID: 1, Parts: []Partition{{ID: 1}}}},
	} {
		if err := checkGroups(gs); err == nil {
			t.Errorf("checkGroups(%+v) = nil", gs)
		}
	}
}

// TestReadRefusesASourceNotPlanned: a Source made by hand has no validated
// Config, and Read says so at construction.
func TestReadRefusesASourceNotPlanned(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("Read panicked with %v, want ErrConfig", err)
		}
	}()
	_, s := beam.NewPipelineWithRoot()
	Read(s, &Source{Groups: []Group{{ID: 0, Parts: []Partition{{ID: 0, End: 5}}}}})
}

// TestReadManyPartitionsInFewGroups reads 64 partitions with 4 readers on
// Prism: every record exactly once, in batches of one partition that tile
// each partition's range, with batches cut at BatchSize.
func TestReadManyPartitionsInFewGroups(t *testing.T) {
	cfg := startKafka(t, 64)
	cfg.BatchSize = 50 // several batches per fetch of a partition
	cl := client(t, cfg)
	counts := map[int32]int{}
	for p := range int32(64) {
		counts[p] = 20 + int(p)*7%130 // uneven: 20 to 146 records
	}
	counts[5], counts[40] = 0, 0 // and two empty partitions
	want := produce(t, cl, "g", counts)
	parts := plan(t, cfg, nil, Earliest, true)
	groups := deal(parts, 4)
	if len(groups) != 4 {
		t.Fatalf("%d groups, want 4", len(groups))
	}

	p, s := beam.NewPipelineWithRoot()
	batches := read(s, cfg, groups)
	passert.EqualsList(s, beam.ParDo(s, recordValues, batches), want)
	passert.Empty(s, tiling(s, parts, batches))
	passert.Empty(s, beam.ParDo(s, &oversizeFn{Max: cfg.BatchSize}, batches))
	if err := runWithin(t, p, 90*time.Second); err != nil {
		t.Fatal(err)
	}
}
