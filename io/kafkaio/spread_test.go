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
	enc := beam.NewElementEncoder(reflect.TypeOf(Partition{}))
	for _, c := range []struct{ parts, parallelism int }{{8, 8}, {3, 8}, {12, 8}, {16, 4}, {8, 2}, {100, 8}, {64, 64}} {
		var parts []Partition
		for i := range c.parts {
			parts = append(parts, Partition{ID: int32(i), Start: int64(i) * 1000, End: 62500 + int64(i)})
		}
		got := Spread(parts, c.parallelism)
		if !cmp.Equal(Spread(parts, c.parallelism), got) {
			t.Errorf("%+v: Spread is not deterministic", c)
		}
		maxLoad := (c.parts + c.parallelism - 1) / c.parallelism
		for _, hash := range []struct {
			name string
			fn   func([]byte) int32
		}{{"ByteBuffer", byteBufferHash}, {"murmur3", murmur3Int}} {
			load := make([]int, c.parallelism)
			for i, p := range got {
				if p.ID != parts[i].ID || p.Start != parts[i].Start || p.End != parts[i].End {
					t.Fatalf("%+v: Spread changed partition %d: %+v", c, i, p)
				}
				var buf bytes.Buffer
				if err := enc.Encode(p, &buf); err != nil {
					t.Fatal(err)
				}
				load[flinkSubtask(hash.fn(buf.Bytes()), flinkMaxParallelism(c.parallelism), c.parallelism)]++
			}
			for s, n := range load {
				if n > maxLoad {
					t.Errorf("%d partitions, parallelism %d, %s hash: subtask %d reads %d partitions (at most %d): %v", c.parts, c.parallelism, hash.name, s, n, maxLoad, load)
					break
				}
			}
		}
	}
	one := []Partition{{ID: 0, End: 5}}
	if got := Spread(one, 8); !cmp.Equal(got, one) {
		t.Errorf("one partition: %+v", got)
	}
}

// Spread relies on the element being encoded as the Go SDK's schema row:
// {ID, Start, End, Spread} as varints after the field count and an empty
// nil bitmap.
func TestPartitionEncoding(t *testing.T) {
	var buf bytes.Buffer
	if err := beam.NewElementEncoder(reflect.TypeOf(Partition{})).Encode(Partition{ID: 2, End: 62500, Spread: 5}, &buf); err != nil {
		t.Fatal(err)
	}
	if want := []byte{4, 0, 2, 0, 0xa4, 0xe8, 0x03, 5}; !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("encoded %x, want %x", buf.Bytes(), want)
	}
}
