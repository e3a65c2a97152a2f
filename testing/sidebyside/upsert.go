package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/kafkatest"
	"github.com/haade/haade/testing/stats"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The upsert comparison (--keys): the same topic of keyed updates, a share
// of them tombstones, into a table that keeps the latest event of each key.
//
//   - flink: bronze --upsert --runner=flink --bounded (copy-on-write deletes
//     and the append in one transaction; bronze's table, partitioned by day
//     of ingestion); bronze: the same on Prism, streaming.
//   - native: Flink SQL's upsert-kafka source into an Iceberg format-v2
//     table in upsert mode (native_upsert.go): Iceberg's Flink sink writes
//     an equality delete of the key with each row (merge-on-read).
//
// The table is right when it holds exactly the latest record, by offset, of
// each key whose latest record is not a tombstone, and nothing else. The
// expected set comes from reading the produced topic back (warmUp), so the
// offsets are Kafka's own. A scan of the whole table costs too much to run
// at every poll, so the harness scans a new snapshot only once the
// contender has read the whole topic by its own account (caughtUp: bronze's
// committed offsets in the table's snapshots; the Flink Kafka source's
// offsets, which it commits to its consumer group when a checkpoint
// completes, as Iceberg's sink commits its files).

// keyAt is where a key's row comes from: its record's partition and offset.
type keyAt struct {
	Partition int32
	Offset    int64
}

// produceKeyed fills the topic with --events sample events over --keys keys
// (kafkatest.SpreadKeys, each to its key's partition), about --tombstones
// of them tombstones: the key with a null value. The values are the
// generator's, and a tombstone drops one, so a seed makes the same events
// with any ratio.
func produceKeyed(ctx context.Context, addrs []string, topic string, cfg Config) error {
	g := kafkatest.NewGenerator(cfg.Seed, 0, nil)
	g.UTC = cfg.Timestamps == "utc"
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	const chunk = 250_000
	for done := 0; done < cfg.Events; {
		n := min(chunk, cfg.Events-done)
		vs := make([][]byte, n)
		for i := range vs {
			v, _ := g.Next()
			if rng.Float64() >= cfg.Tombstones {
				vs[i] = v
			}
		}
		if err := kafkatest.ProduceKeyed(ctx, addrs, topic, kafkatest.SpreadKeys(done, n, cfg.Keys), vs); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// latest gathers, from the records of a topic read from its start, each
// key's latest record, and whether it is a tombstone.
type latest struct {
	at       map[string]keyAt
	deleted  map[string]bool
	keyless  int
	straddle []string // keys seen in two partitions
}

func newLatest() *latest {
	return &latest{at: map[string]keyAt{}, deleted: map[string]bool{}}
}

// add takes one record. Records of a partition come in offset order, but
// the partitions' interleave, so "latest" compares offsets.
func (l *latest) add(r *kgo.Record) {
	if r.Key == nil {
		l.keyless++
		return
	}
	k := string(r.Key)
	if old, ok := l.at[k]; ok {
		if old.Partition != r.Partition {
			if len(l.straddle) < 5 {
				l.straddle = append(l.straddle, k)
			}
			return
		}
		if old.Offset > r.Offset {
			return
		}
	}
	l.at[k] = keyAt{r.Partition, r.Offset}
	l.deleted[k] = r.Value == nil
}

// live is the expected table: key -> its latest record, for each key whose
// latest record is not a tombstone. It fails on a record without a key, or
// a key in two partitions, which the workload never makes.
func (l *latest) live() (map[string]keyAt, error) {
	if l.keyless > 0 || len(l.straddle) > 0 {
		return nil, fmt.Errorf("keyed topic: %d records without a key, keys in two partitions %q: want none", l.keyless, l.straddle)
	}
	out := make(map[string]keyAt, len(l.at))
	for k, at := range l.at {
		if !l.deleted[k] {
			out[k] = at
		}
	}
	return out, nil
}

// scanKeys reads the key, partition and offset of every row of tbl's
// current snapshot through iceberg-go's scan, which applies the table's
// delete files (native's equality and position deletes; bronze's
// copy-on-write table has none). A key in two rows is an error. The key
// column is binary in bronze's table and a string in native's.
func scanKeys(ctx context.Context, tbl *table.Table) (map[string]keyAt, error) {
	_, recs, err := tbl.Scan(table.WithSelectedFields("kafka_key", "kafka_partition", "kafka_offset")).ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]keyAt{}
	var dups []string
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		ki, pi, oi := rec.Schema().FieldIndices("kafka_key"), rec.Schema().FieldIndices("kafka_partition"), rec.Schema().FieldIndices("kafka_offset")
		if len(ki) == 0 || len(pi) == 0 || len(oi) == 0 {
			rec.Release()
			return nil, fmt.Errorf("no kafka_key, kafka_partition or kafka_offset column in %v", rec.Schema())
		}
		key, err := keyColumn(rec.Column(ki[0]))
		parts, ok1 := rec.Column(pi[0]).(*array.Int32)
		offs, ok2 := rec.Column(oi[0]).(*array.Int64)
		if err != nil || !ok1 || !ok2 {
			rec.Release()
			return nil, fmt.Errorf("kafka_key %v, kafka_partition %v, kafka_offset %v: want a string or binary, int32, int64",
				rec.Column(ki[0]).DataType(), rec.Column(pi[0]).DataType(), rec.Column(oi[0]).DataType())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			k := key(i)
			if _, ok := out[k]; ok && len(dups) < 5 {
				dups = append(dups, k)
			}
			out[k] = keyAt{parts.Value(i), offs.Value(i)}
		}
		rec.Release()
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("keys in two rows or more, among them %q", dups)
	}
	return out, nil
}

// keyColumn returns a reader of the key column's values as strings.
func keyColumn(col arrow.Array) (func(int) string, error) {
	switch c := col.(type) {
	case *array.String:
		return c.Value, nil
	case *array.LargeString:
		return c.Value, nil
	case *array.Binary:
		return func(i int) string { return string(c.Value(i)) }, nil
	case *array.LargeBinary:
		return func(i int) string { return string(c.Value(i)) }, nil
	}
	return nil, fmt.Errorf("key column of type %v", col.DataType())
}

// keysDiff is go-cmp's diff of the expected and the scanned table, cut to
// its first lines with the counts of what differs: at 100k keys a full diff
// is megabytes.
func keysDiff(want, got map[string]keyAt) string {
	var missing, extra, wrong int
	for k, w := range want {
		if g, ok := got[k]; !ok {
			missing++
		} else if g != w {
			wrong++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra++
		}
	}
	d := strings.Split(cmp.Diff(want, got), "\n")
	if len(d) > 30 {
		d = append(d[:30], fmt.Sprintf("... (%d more lines)", len(d)-30))
	}
	return fmt.Sprintf("%d live keys expected, %d rows: %d missing, %d not live (deleted or never written), %d not the latest record; key -> partition, offset (-want +got):\n%s",
		len(want), len(got), missing, extra, wrong, strings.Join(d, "\n"))
}

// upsertWatch follows a keyed run's table until it is right.
type upsertWatch struct {
	r    trial
	c    contender
	want map[string]keyAt
	ends map[int32]int64
	// caught: the contender has read the whole topic (c.caughtUp).
	caught  bool
	scanned int64  // the snapshot scanned last
	last    string // why the last scan was not right
	// rightAt is when the snapshot found right was committed (its
	// timestamp-ms): the poll and the scan after it are not the contender's
	// time.
	rightAt time.Time
}

// poll loads the table. It returns its data rows (before deletes), and
// whether it is right, which it scans for only once the contender caught
// up and only for a snapshot it has not scanned.
func (w *upsertWatch) poll(ctx context.Context) (rows int64, right bool) {
	tbl, err := icebergio.LoadTable(ctx, w.r.cat, w.r.table)
	if err != nil {
		return 0, false // not created yet, or a transient error
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return 0, false
	}
	if snap.Summary != nil {
		rows, _ = strconv.ParseInt(snap.Summary.Properties["total-records"], 10, 64)
	}
	if !w.caught {
		if w.caught, err = w.c.caughtUp(ctx, w.r, tbl, w.ends); err != nil {
			w.last = err.Error()
		}
		if !w.caught {
			return rows, false
		}
		logf("%s: read the whole topic by its own account; scanning each new snapshot", w.r.name)
	}
	if snap.SnapshotID == w.scanned {
		return rows, false
	}
	w.scanned = snap.SnapshotID
	got, err := scanKeys(ctx, tbl)
	if err != nil {
		w.last = fmt.Sprintf("snapshot %d: %v", snap.SnapshotID, err)
		return rows, false
	}
	if !maps.Equal(got, w.want) {
		w.last = fmt.Sprintf("snapshot %d: %s", snap.SnapshotID, keysDiff(w.want, got))
		return rows, false
	}
	w.rightAt = time.UnixMilli(snap.TimestampMs)
	return rows, true
}

// why says, for an error, why the table was not right at the last poll;
// empty for an append run (nil) or when nothing is known.
func (w *upsertWatch) why() string {
	if w == nil || w.last == "" {
		return ""
	}
	return "; the table is not right: " + w.last
}

// check is the final check, after the contender stopped: the table must
// still be right.
func (w *upsertWatch) check(ctx context.Context) (int64, error) {
	tbl, err := icebergio.LoadTable(ctx, w.r.cat, w.r.table)
	if err != nil {
		return 0, err
	}
	got, err := scanKeys(ctx, tbl)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", w.r.table, err)
	}
	if !cmp.Equal(w.want, got) {
		return 0, fmt.Errorf("after the stop, table %s is not the latest record of each live key: %s", w.r.table, keysDiff(w.want, got))
	}
	return int64(len(got)), nil
}

// tableFiles are the live files of a table's current snapshot by content.
// EqDeletesOnOlder counts the equality delete files whose data sequence
// number is above the lowest data file's: those that delete rows of data
// files committed before them, which a reader must merge (an equality
// delete applies only to data files of lower sequence numbers; rows written
// in the same commit are deleted by position).
type tableFiles struct {
	Data, EqDeletes, PosDeletes, EqDeletesOnOlder int64
}

// upsertFiles counts the live files of tbl's current snapshot.
func upsertFiles(ctx context.Context, tbl *table.Table) (tableFiles, error) {
	var f tableFiles
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return f, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return f, err
	}
	mfs, err := snap.Manifests(fs)
	if err != nil {
		return f, err
	}
	minData := int64(-1)
	var eqSeqs []int64
	for _, mf := range mfs {
		for e, err := range mf.Entries(fs, true) {
			if err != nil {
				return f, err
			}
			switch e.DataFile().ContentType() {
			case iceberg.EntryContentData:
				f.Data++
				if minData < 0 || e.SequenceNum() < minData {
					minData = e.SequenceNum()
				}
			case iceberg.EntryContentEqDeletes:
				f.EqDeletes++
				eqSeqs = append(eqSeqs, e.SequenceNum())
			case iceberg.EntryContentPosDeletes:
				f.PosDeletes++
			}
		}
	}
	for _, s := range eqSeqs {
		if minData >= 0 && s > minData {
			f.EqDeletesOnOlder++
		}
	}
	return f, nil
}

// readCost scans the whole table (every column) with iceberg-go n times and
// returns each scan's seconds: what a reader pays for the table's layout,
// equality deletes included.
func readCost(ctx context.Context, tbl *table.Table, n int) ([]float64, error) {
	var out []float64
	for range n {
		t0 := time.Now()
		t, err := tbl.Scan().ToArrowTable(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0).Seconds())
		t.Release()
	}
	return out, nil
}

// measureUpsertTable fills res with the table's files and read cost.
func measureUpsertTable(ctx context.Context, r trial, res *Result) error {
	tbl, err := icebergio.LoadTable(ctx, r.cat, r.table)
	if err != nil {
		return err
	}
	f, err := upsertFiles(ctx, tbl)
	if err != nil {
		return fmt.Errorf("files of %s: %w", r.table, err)
	}
	res.DataFiles, res.EqDeleteFiles, res.PosDeleteFiles, res.EqDeleteFilesOnOlder = f.Data, f.EqDeletes, f.PosDeletes, f.EqDeletesOnOlder
	if res.ScanSeconds, err = readCost(ctx, tbl, 3); err != nil {
		return fmt.Errorf("scan of %s: %w", r.table, err)
	}
	res.ScanMedianSeconds = stats.Median(res.ScanSeconds)
	return nil
}

// caughtUpOffsets says whether offsets (partition -> next offset) reach
// every partition's end, and if not, which lag.
func caughtUpOffsets(next func(int32) (int64, bool), ends map[int32]int64) (bool, error) {
	var behind []string
	for p, end := range ends {
		if n, ok := next(p); !ok || n < end {
			behind = append(behind, fmt.Sprintf("%d: %d of %d", p, n, end))
		}
	}
	if len(behind) == 0 {
		return true, nil
	}
	sort.Strings(behind)
	return false, fmt.Errorf("not read to the end: partition %s", strings.Join(behind, ", "))
}

// bronzeCaughtUp: bronze's committed offsets in the table's snapshots reach
// the topic's end (its last window is committed).
func bronzeCaughtUp(_ context.Context, r trial, tbl *table.Table, ends map[int32]int64) (bool, error) {
	offs, err := icebergio.CommittedOffsets(tbl, r.name)
	if err != nil {
		return false, err
	}
	return caughtUpOffsets(func(p int32) (int64, bool) { return offs.Next(r.topic, p) }, ends)
}

// groupCaughtUp: the consumer group of the run's Flink job (its name, as
// the script sets properties.group.id) has committed the topic's end. The
// Kafka source commits when a checkpoint completes, as Iceberg's sink
// commits that checkpoint's files: the snapshot follows, or is there.
func groupCaughtUp(ctx context.Context, r trial, _ *table.Table, ends map[int32]int64) (bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return false, err
	}
	defer cl.Close()
	fetched, err := kadm.NewClient(cl).FetchOffsets(ctx, flinkJobName(r))
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		return false, err
	}
	return caughtUpOffsets(func(p int32) (int64, bool) {
		o, ok := fetched.Lookup(r.topic, p)
		return o.At, ok
	}, ends)
}
