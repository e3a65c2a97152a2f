package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/kgo"
)

// loopPipeline is the pipeline id of the loop's snapshot.
const loopPipeline = "benchmark-loop"

// runLoop is the yardstick without Beam: goroutines consumers, each reading
// its share of the partitions with franz-go, parsing with parse.Row
// into the rows bronze writes (tables.BronzeEvent, tables.DeadLetter), turning each
// chunk of rows into Arrow with rows.RowBuilder (Write's appender) and
// writing it as zstd Parquet with table.WriteRecords; then one commit per
// table. Rows are the same as the pipeline's: Kafka coordinates, ingested_at
// at millisecond precision, dead letters with their reason.
func runLoop(ctx context.Context, kc kafkaio.Config, cc icebergio.CatalogConfig, goroutines, chunk int) error {
	cat, err := cc.Open(ctx)
	if err != nil {
		return err
	}
	tblE, err := icebergio.EnsureTable(ctx, cat, tables.Bronze)
	if err != nil {
		return err
	}
	tblD, err := icebergio.EnsureTable(ctx, cat, tables.DeadLetters)
	if err != nil {
		return err
	}
	parts, err := logPartitions(ctx, kc)
	if err != nil {
		return err
	}
	groups := make([][]kafkaio.Partition, goroutines)
	for i, p := range parts {
		groups[i%goroutines] = append(groups[i%goroutines], p)
	}

	var (
		mu           sync.Mutex
		filesE       []iceberg.DataFile
		filesD       []iceberg.DataFile
		wg           sync.WaitGroup
		errs         = make([]error, goroutines)
		wctx, cancel = context.WithCancel(ctx)
	)
	defer cancel()
	for g := range groups {
		wg.Go(func() {
			e, d, err := consume(wctx, kc, groups[g], tblE, tblD, chunk)
			if err != nil {
				errs[g] = err
				cancel()
				return
			}
			mu.Lock()
			filesE, filesD = append(filesE, e...), append(filesD, d...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, x := range []struct {
		tbl   *table.Table
		files []iceberg.DataFile
	}{{tblE, filesE}, {tblD, filesD}} {
		if len(x.files) == 0 {
			continue
		}
		tx := x.tbl.NewTransaction()
		props := iceberg.Properties{icebergio.SummaryPipeline: loopPipeline}
		if err := tx.AddDataFiles(ctx, x.files, props, table.WithoutDuplicateCheck()); err != nil {
			return err
		}
		if _, err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

// consume reads parts to their ends and writes their rows, chunk rows at a
// time; it returns the data files, uncommitted.
func consume(ctx context.Context, kc kafkaio.Config, parts []kafkaio.Partition, tblE, tblD *table.Table, chunk int) (filesE, filesD []iceberg.DataFile, err error) {
	end := map[int32]int64{}
	at := map[int32]kgo.Offset{}
	for _, p := range parts {
		if p.End > p.Start {
			end[p.ID] = p.End
			at[p.ID] = kgo.NewOffset().At(p.Start)
		}
	}
	if len(end) == 0 {
		return nil, nil, nil
	}
	opts, err := kc.ClientOptions()
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{kc.Topic: at}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxPartitionBytes(fetchBytes(kc)),
		kgo.FetchMaxWait(200*time.Millisecond),
	)...)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	rbE, err := rows.NewRowBuilder(nil, tblE.Schema(), tables.BronzeEvent{})
	if err != nil {
		return nil, nil, err
	}
	defer rbE.Release()
	rbD, err := rows.NewRowBuilder(nil, tblD.Schema(), tables.DeadLetter{})
	if err != nil {
		return nil, nil, err
	}
	defer rbD.Release()

	events := make([]tables.BronzeEvent, 0, chunk)
	var dead []tables.DeadLetter
	flush := func() error {
		if len(events) > 0 {
			if err := rbE.Append(events); err != nil {
				return err
			}
			fs, err := writeBatch(ctx, tblE, rbE)
			if err != nil {
				return err
			}
			filesE = append(filesE, fs...)
			clear(events) // drop the strings, keep the capacity
			events = events[:0]
		}
		if len(dead) > 0 {
			if err := rbD.Append(dead); err != nil {
				return err
			}
			fs, err := writeBatch(ctx, tblD, rbD)
			if err != nil {
				return err
			}
			filesD = append(filesD, fs...)
			dead = nil
		}
		return nil
	}

	left := len(end)
	for left > 0 {
		fetches := cl.PollRecords(ctx, max(chunk-len(events)-len(dead), 1))
		for _, fe := range fetches.Errors() {
			return nil, nil, fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		ingested := time.Now().UnixMilli() * 1000 // as enrich.IngestedAt: milliseconds
		fetches.EachRecord(func(rec *kgo.Record) {
			e, ok := end[rec.Partition]
			if !ok || rec.Offset >= e {
				return
			}
			if rec.Offset == e-1 {
				left--
			}
			r := kafkaio.RecordOf(rec)
			ev, dl, ok := parse.Row(rec.Topic, rec.Partition, &r, r.Value)
			if !ok {
				dl.IngestedAt = ingested
				dead = append(dead, dl)
				return
			}
			ev.IngestedAt = ingested
			events = append(events, ev)
		})
		if len(events)+len(dead) >= chunk || left == 0 {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
	}
	return filesE, filesD, nil
}

// writeBatch writes the builder's rows into data files of tbl, uncommitted.
func writeBatch(ctx context.Context, tbl *table.Table, rb *rows.RowBuilder) ([]iceberg.DataFile, error) {
	rec := rb.NewRecordBatch()
	seq := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	var out []iceberg.DataFile
	for df, err := range table.WriteRecords(ctx, tbl, rb.Schema(), iter.Seq2[arrow.RecordBatch, error](seq)) {
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	return out, nil
}

// fetchBytes is the per-partition fetch size the Kafka read uses.
func fetchBytes(kc kafkaio.Config) int32 {
	if kc.FetchMaxPartitionBytes > 0 {
		return kc.FetchMaxPartitionBytes
	}
	return kafkaio.DefaultFetchMaxPartitionBytes
}
