// Package kit holds what the security and fault-injection tiers share:
// producing numbered records to Kafka, and
// counting, by (partition, offset), what the bronze and dead-letter tables
// hold against what was produced. It needs no server itself; its callers
// (behind the e2e and faults build tags) start them.
package kit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Key is a record's place in its topic.
type Key struct {
	Partition int32
	Offset    int64
}

func (k Key) String() string { return fmt.Sprintf("%d/%d", k.Partition, k.Offset) }

// ParseExports reads `export K=V` lines, as the scripts' env commands
// print them, into a map (single quotes around V removed).
func ParseExports(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "export ") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		if !ok {
			continue
		}
		m[k] = strings.Trim(v, "'")
	}
	return m
}

// Produce sends n records to topic, value(i) being the i-th, and returns
// where each one landed, in order. Records are spread over the partitions
// by the client's default partitioner (each has a distinct key).
func Produce(ctx context.Context, opts []kgo.Opt, topic string, n int, value func(i int) []byte) ([]Key, error) {
	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordRetries(20), kgo.ProducerBatchMaxBytes(1_000_000), kgo.MaxBufferedRecords(10000))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	keys := make([]Key, n)
	errs := make(chan error, 1)
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: value(i)}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
				return
			}
			keys[i] = Key{r.Partition, r.Offset}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	select {
	case err := <-errs:
		return nil, fmt.Errorf("produce to %s: %w", topic, err)
	default:
	}
	return keys, nil
}

// coord is the part of a bronze or dead-letter row that says where its
// record came from; ScanRows skips the other columns.
type coord struct {
	KafkaTopic     string `iceberg:"kafka_topic,required"`
	KafkaPartition int32  `iceberg:"kafka_partition,required"`
	KafkaOffset    int64  `iceberg:"kafka_offset,required"`
}

// Seen counts how often each key of topic appears over the tables. A table
// that does not exist counts as empty.
func Seen(ctx context.Context, cfg icebergio.CatalogConfig, topic string, tables ...string) (map[Key]int, error) {
	seen := map[Key]int{}
	for _, t := range tables {
		var rows []coord
		if err := icebergio.ScanRows(ctx, cfg, t, &rows); err != nil {
			if errors.Is(err, catalog.ErrNoSuchTable) || strings.Contains(err.Error(), "does not exist") {
				continue
			}
			return nil, fmt.Errorf("scan %s: %w", t, err)
		}
		for _, r := range rows {
			if r.KafkaTopic == topic {
				seen[Key{r.KafkaPartition, r.KafkaOffset}]++
			}
		}
	}
	return seen, nil
}

// Tally is the comparison of what was produced with what the tables hold.
type Tally struct {
	Produced   int
	Lost       int // produced, in no table
	Duplicated int // extra copies of produced records
	Unexpected int // keys in the tables that were never produced
	// Examples of lost and duplicated keys, at most 5 each.
	LostKeys, DupKeys []Key
}

// Compare tallies produced against seen.
func Compare(produced []Key, seen map[Key]int) Tally {
	t := Tally{Produced: len(produced)}
	want := map[Key]bool{}
	for _, k := range produced {
		want[k] = true
		switch n := seen[k]; {
		case n == 0:
			t.Lost++
			if len(t.LostKeys) < 5 {
				t.LostKeys = append(t.LostKeys, k)
			}
		case n > 1:
			t.Duplicated += n - 1
			if len(t.DupKeys) < 5 {
				t.DupKeys = append(t.DupKeys, k)
			}
		}
	}
	for k := range seen {
		if !want[k] {
			t.Unexpected++
		}
	}
	sort.Slice(t.LostKeys, func(i, j int) bool { return less(t.LostKeys[i], t.LostKeys[j]) })
	sort.Slice(t.DupKeys, func(i, j int) bool { return less(t.DupKeys[i], t.DupKeys[j]) })
	return t
}

func less(a, b Key) bool {
	if a.Partition != b.Partition {
		return a.Partition < b.Partition
	}
	return a.Offset < b.Offset
}

// OK is true when nothing was lost or duplicated.
func (t Tally) OK() bool { return t.Lost == 0 && t.Duplicated == 0 && t.Unexpected == 0 }

func (t Tally) String() string {
	s := fmt.Sprintf("produced %d, lost %d, duplicated %d", t.Produced, t.Lost, t.Duplicated)
	if t.Unexpected > 0 {
		s += fmt.Sprintf(", %d never produced", t.Unexpected)
	}
	if len(t.LostKeys) > 0 {
		s += fmt.Sprintf(" (lost e.g. %v)", t.LostKeys)
	}
	if len(t.DupKeys) > 0 {
		s += fmt.Sprintf(" (duplicated e.g. %v)", t.DupKeys)
	}
	return s
}
