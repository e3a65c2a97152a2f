package kafkaio

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/google/go-cmp/cmp"
)

// The partitions of a 62,500-record-per-partition topic, before Spread
// existed: the Go SDK's row encoding of {ID, Start 0, End 62500}. On the
// test cluster (Flink 1.19, Beam 2.62's job server, parallelism 8) the
// read's subtasks got these many partitions each, from the REST API.
func TestFlinkKeyHashMatchesTheCluster(t *testing.T) {
	got := make([]int, 8)
	for p := byte(0); p < 8; p++ {
		key := []byte{3, 0, p, 0, 0xa4, 0xe8, 0x03}
		got[flinkSubtask(byteBufferHash(key), flinkMaxParallelism(8), 8)]++
	}
	if want := []int{2, 1, 0, 1, 2, 0, 2, 0}; !cmp.Equal(got, want) {
		t.Errorf("partitions per subtask = %v, the cluster had %v", got, want)
	}
}

// Vectors from the reference implementation (Python's mmh3.hash_bytes,
// first four bytes, little-endian), which Guava's murmur3_128 matches.
func TestMurmur3Int(t *testing.T) {
	forty := make([]byte, 40)
	for i := range forty {
		forty[i] = byte(i)
	}
	for _, c := range []struct {
		in   []byte
		want uint32
	}{
		{nil, 0},
		{[]byte("hello"), 0x41bd9b02},
		{[]byte{3, 0, 0, 0, 0xa4, 0xe8, 0x03}, 0x6310b467},
		{forty, 0x418c8064},
	} {
		if got := uint32(murmur3Int(c.in)); got != c.want {
			t.Errorf("murmur3Int(%x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestFlinkMaxParallelism(t *testing.T) {
	for p, want := range map[int]int{1: 128, 8: 128, 85: 128, 86: 256, 200: 512, 30000: 32768} {
		if got := flinkMaxParallelism(p); got != want {
			t.Errorf("flinkMaxParallelism(%d) = %d, want %d", p, got, want)
		}
	}
}

func TestSpread(t *testing.T) {
	enc := beam.NewElementEncoder(reflect.TypeOf(Group{}))
	for _, c := range []struct{ parts, groups, parallelism int }{
		{8, 8, 8}, {3, 3, 8}, {12, 12, 8}, {16, 16, 4}, {8, 8, 2}, {100, 100, 8}, {64, 64, 64},
		{1024, 8, 8}, {256, 8, 8}, {64, 4, 4},
	} {
		var parts []Partition
		for i := range c.parts {
			parts = append(parts, Partition{ID: int32(i), Start: int64(i) * 1000, End: 62500 + int64(i)})
		}
		groups := deal(parts, c.groups)
		got := spread(groups, c.parallelism)
		if !cmp.Equal(spread(groups, c.parallelism), got) {
			t.Errorf("%+v: Spread is not deterministic", c)
		}
		maxLoad := (c.groups + c.parallelism - 1) / c.parallelism
		for _, hash := range []struct {
			name string
			fn   func([]byte) int32
		}{{"ByteBuffer", byteBufferHash}, {"murmur3", murmur3Int}} {
			load := make([]int, c.parallelism)
			for i, g := range got {
				if g.ID != groups[i].ID || !cmp.Equal(g.Parts, groups[i].Parts) {
					t.Fatalf("%+v: Spread changed group %d: %+v", c, i, g)
				}
				var buf bytes.Buffer
				if err := enc.Encode(g, &buf); err != nil {
					t.Fatal(err)
				}
				load[flinkSubtask(hash.fn(buf.Bytes()), flinkMaxParallelism(c.parallelism), c.parallelism)]++
			}
			for s, n := range load {
				if n > maxLoad {
					t.Errorf("%d groups, parallelism %d, %s hash: subtask %d reads %d groups (at most %d): %v", c.groups, c.parallelism, hash.name, s, n, maxLoad, load)
					break
				}
			}
		}
	}
	one := []Group{{ID: 0, Parts: []Partition{{ID: 0, End: 5}}}}
	if got := spread(one, 8); !cmp.Equal(got, one) {
		t.Errorf("one group: %+v", got)
	}
}

// Spread relies on Spread changing the element's encoding, and on the
// encoding being the same for equal groups: the Go SDK's schema row.
func TestGroupEncoding(t *testing.T) {
	enc := beam.NewElementEncoder(reflect.TypeOf(Group{}))
	dec := beam.NewElementDecoder(reflect.TypeOf(Group{}))
	encode := func(g Group) []byte {
		var buf bytes.Buffer
		if err := enc.Encode(g, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	g := Group{ID: 2, Parts: []Partition{{ID: 2, End: 62500}, {ID: 10, Start: 7, End: unbounded}}}
	spread := g
	spread.Spread = 5
	if bytes.Equal(encode(g), encode(spread)) {
		t.Errorf("Spread does not change the encoding %x", encode(g))
	}
	if !bytes.Equal(encode(spread), encode(spread)) {
		t.Errorf("a group encodes differently twice")
	}
	back, err := dec.Decode(bytes.NewReader(encode(spread)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spread, back); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}
