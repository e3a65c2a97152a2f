package kafkaio

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// spread sets each group's Spread so that a runner that keys the read by
// its element places the groups evenly over parallelism subtasks, and
// returns the groups. Bronze's Flink parallelism is the number of groups,
// so each subtask reads one group.
//
// Beam's Flink runner keys a splittable DoFn's state by the encoded
// element: here the Group. Flink then hashes that key into one of its
// key groups, and the key group to a subtask. With 8 elements and
// parallelism 8, the hashes of the elements alone put two or three
// on one subtask and none on others (seen on the test cluster, when each
// element was a partition: [2 1 0 1 2 0 2 0] partitions per subtask). A
// subtask's bundle runs its elements one after another, so those are read
// at a half or a third of the rate, and the job takes as long as its most
// loaded subtask.
//
// spread picks, for each group in turn, the smallest Spread whose key
// lands on a least loaded subtask under both key hashes of Beam's Flink
// runner: the key's java.nio.ByteBuffer hash code (Beam 2.62, the job
// server of the test cluster) and the first four bytes of its
// murmur3_128 hash (FlinkKey, in later releases). Flink's default maximum
// parallelism is assumed (the pipelines do not set one). Other runners do
// not key by the element, and spread changes nothing for them but a field.
func spread(groups []Group, parallelism int) []Group {
	if parallelism <= 1 || len(groups) <= 1 {
		return groups
	}
	enc := beam.NewElementEncoder(reflect.TypeOf(Group{}))
	maxp := flinkMaxParallelism(parallelism)
	loadA, loadB := make([]int, parallelism), make([]int, parallelism)
	out := slices.Clone(groups)
	var buf bytes.Buffer
	for i := range out {
		minA, minB := slices.Min(loadA), slices.Min(loadB)
		best, bestCost := int32(0), -1
		var bestA, bestB int
		for s := int32(0); s < 1<<14; s++ {
			out[i].Spread = s
			buf.Reset()
			if err := enc.Encode(out[i], &buf); err != nil {
				return groups
			}
			a := flinkSubtask(byteBufferHash(buf.Bytes()), maxp, parallelism)
			b := flinkSubtask(murmur3Int(buf.Bytes()), maxp, parallelism)
			cost := loadA[a] - minA + loadB[b] - minB
			if bestCost < 0 || cost < bestCost {
				best, bestCost, bestA, bestB = s, cost, a, b
			}
			if cost == 0 {
				break
			}
		}
		out[i].Spread = best
		loadA[bestA]++
		loadB[bestB]++
	}
	return out
}

// flinkMaxParallelism is Flink's default maximum parallelism for an
// operator of parallelism p (KeyGroupRangeAssignment).
func flinkMaxParallelism(p int) int {
	n := 1
	for n < p+p/2 {
		n <<= 1
	}
	return min(max(n, 128), 1<<15)
}

// flinkSubtask is the subtask that Flink gives a key whose hashCode() is
// hash: its key group, murmur-mixed, then the group's subtask.
func flinkSubtask(hash int32, maxp, p int) int {
	group := int(flinkMurmur(hash)) % maxp
	return group * p / maxp
}

// flinkMurmur is Flink's MathUtils.murmurHash of an int.
func flinkMurmur(code int32) int32 {
	c := uint32(code) * 0xcc9e2d51
	c = bits.RotateLeft32(c, 15) * 0x1b873593
	c = bits.RotateLeft32(c, 13)*5 + 0xe6546b64
	c ^= 4
	c ^= c >> 16
	c *= 0x85ebca6b
	c ^= c >> 13
	c *= 0xc2b2ae35
	c ^= c >> 16
	switch r := int32(c); {
	case r >= 0:
		return r
	case r != -1<<31:
		return -r
	default:
		return 0
	}
}

// byteBufferHash is java.nio.ByteBuffer.hashCode of b: bytes are signed.
func byteBufferHash(b []byte) int32 {
	h := int32(1)
	for i := len(b) - 1; i >= 0; i-- {
		h = 31*h + int32(int8(b[i]))
	}
	return h
}

// murmur3Int is Guava's Hashing.murmur3_128().hashBytes(b).asInt(): the
// low 32 bits of h1 of MurmurHash3 x64 128, seed 0.
func murmur3Int(b []byte) int32 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	var h1, h2 uint64
	n := len(b)
	for ; len(b) >= 16; b = b[16:] {
		k1, k2 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
		h1 = (bits.RotateLeft64(h1, 27)+h2)*5 + 0x52dce729
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
		h2 = (bits.RotateLeft64(h2, 31)+h1)*5 + 0x38495ab5
	}
	var k1, k2 uint64
	for i := len(b) - 1; i >= 0; i-- {
		if i >= 8 {
			k2 = k2<<8 | uint64(b[i])
		} else {
			k1 = k1<<8 | uint64(b[i])
		}
	}
	if len(b) > 8 {
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
	}
	if len(b) > 0 {
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	return int32(uint32(h1))
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	return k ^ k>>33
}
