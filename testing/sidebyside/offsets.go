package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkOffsets is the exactly-once check after a run, beyond the count:
// every (partition, offset) of the topic is in the table once. The topic
// holds only valid events (preload), so every offset of every partition,
// from 0 to its end, must be there, and none twice.
func (e *env) checkOffsets(ctx context.Context, ident string) error {
	ends, err := endOffsets(ctx, e.topic)
	if err != nil {
		return err
	}
	seen := map[int32][]uint64{} // a bit per offset
	for p, end := range ends {
		seen[p] = make([]uint64, (end+63)/64)
	}
	id, err := icebergio.Identifier(ident)
	if err != nil {
		return err
	}
	tbl, err := e.cat.LoadTable(ctx, id)
	if err != nil {
		return fmt.Errorf("load %s: %w", ident, err)
	}
	_, recs, err := tbl.Scan(table.WithSelectedFields("kafka_partition", "kafka_offset")).ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("scan %s: %w", ident, err)
	}
	var rows, dups, outside int64
	for rec, err := range recs {
		if err != nil {
			return fmt.Errorf("scan %s: %w", ident, err)
		}
		pi, oi := rec.Schema().FieldIndices("kafka_partition"), rec.Schema().FieldIndices("kafka_offset")
		if len(pi) == 0 || len(oi) == 0 {
			rec.Release()
			return fmt.Errorf("%s: no kafka_partition or kafka_offset column", ident)
		}
		parts, ok1 := rec.Column(pi[0]).(*array.Int32)
		offs, ok2 := rec.Column(oi[0]).(*array.Int64)
		if !ok1 || !ok2 {
			rec.Release()
			return fmt.Errorf("%s: kafka_partition %v, kafka_offset %v: want int32, int64", ident, rec.Column(pi[0]).DataType(), rec.Column(oi[0]).DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			rows++
			bits, off := seen[parts.Value(i)], offs.Value(i)
			if off < 0 || off >= ends[parts.Value(i)] {
				outside++
				continue
			}
			if bits[off/64]&(1<<(off%64)) != 0 {
				dups++
			}
			bits[off/64] |= 1 << (off % 64)
		}
		rec.Release()
	}
	var missing, total int64
	for p, end := range ends {
		total += end
		for off := int64(0); off < end; off++ {
			if seen[p][off/64]&(1<<(off%64)) == 0 {
				missing++
			}
		}
	}
	if dups+outside+missing > 0 {
		return fmt.Errorf("not exactly once: table %s holds %d rows for the topic's %d offsets: %d duplicated, %d missing, %d not in the topic", ident, rows, total, dups, missing, outside)
	}
	return nil
}

// endOffsets are the topic's partitions' end offsets.
func endOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

// warmUp reads the whole topic once, before any contender's clock starts,
// and checks that it holds want records. A broker that has only been
// written to serves its first reader slowly (its fetch path is not
// compiled yet, and the log segments are read for the first time), and
// that reader was always the first round's first contender: bronze's first
// runs were a third slower than its later ones, Spark's too. each, when not
// nil, sees every record.
func warmUp(ctx context.Context, topic string, want int, each func(*kgo.Record)) error {
	ends, err := endOffsets(ctx, topic)
	if err != nil {
		return err
	}
	at := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	for p, end := range ends {
		if end > 0 {
			at[p] = kgo.NewOffset().AtStart()
			left[p] = end
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at}))
	if err != nil {
		return err
	}
	defer cl.Close()
	read := 0
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			return fmt.Errorf("warm-up read of %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			if each != nil {
				each(r)
			}
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	if read != want {
		return fmt.Errorf("warm-up read of %s: %d records, want %d", topic, read, want)
	}
	return nil
}
