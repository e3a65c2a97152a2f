package kafkaio

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordPool lends franz-go the []kgo.Record slices that each fetched batch
// is decoded into (kgo.PoolRecords), and takes them back once every record
// of the batch is recycled. A read copies what it keeps of a record (its
// offset, timestamp, key and value slices) into its own offsets.Batch, so the
// kgo.Record structs are free as soon as the poll is handled: on a backlog
// they were a tenth of the bytes the process allocated, each with pointers
// for the collector to scan.
//
// Only the structs are pooled, not the decompressed bytes
// (kgo.PoolDecompressBytes): keys and values point into those, and the
// parse and the dead letters hold them after the call.
type recordPool struct{ p sync.Pool }

// recordSlices is the pool every read client shares.
var recordSlices = &recordPool{}

func (rp *recordPool) GetRecords(n int) []kgo.Record {
	if s, ok := rp.p.Get().(*[]kgo.Record); ok && cap(*s) >= n {
		return (*s)[:n]
	}
	return make([]kgo.Record, n)
}

func (rp *recordPool) PutRecords(s []kgo.Record) {
	clear(s) // franz-go zeroes each record it recycles; this keeps the promise for any it did not
	rp.p.Put(&s)
}

// recycle gives the records of fs back to the pool. Nothing may use them,
// or fs's records, afterwards.
func recycle(fs kgo.Fetches) {
	fs.EachRecord(func(r *kgo.Record) { r.Recycle() })
}
