package bronze

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/transforms/enrich"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/tables"
)

// Plan is what Build found out before wiring: the planned Kafka read (its
// partitions and where each one starts and, bounded, ends, and the groups
// they are read in) and the two tables.
type Plan struct {
	*kafkaio.Source
	Events     *icebergio.Sink
	DeadLetter *icebergio.Sink
}

// Build prepares the tables, plans the Kafka read from their offsets, and
// wires the pipeline: Kafka, parse, enrich, Iceberg.
func Build(ctx context.Context, s beam.Scope, cfg Config) (*Plan, error) {
	if err := cfg.Catalog.Check(ctx); err != nil {
		return nil, CatalogError(err)
	}
	topic, err := kafkaio.Open(ctx, cfg.Kafka, kafkaio.DefaultTimeout)
	if err != nil {
		return nil, brokersError(cfg, err)
	}
	defer topic.Close()
	opts := []icebergio.Option{icebergio.Topics(icebergio.TopicIDs{cfg.Kafka.Topic: topic.ID()}), icebergio.Every(cfg.CommitInterval)}
	if cfg.Bounded {
		opts = append(opts, icebergio.Bounded())
	}
	events, err := icebergio.Open(ctx, cfg.Catalog, tables.Bronze.As(cfg.Table), cfg.Pipeline, opts...)
	if err != nil {
		return nil, CatalogError(err)
	}
	dead, err := icebergio.Open(ctx, cfg.Catalog, tables.DeadLetters.As(cfg.DLQTable), cfg.Pipeline, opts...)
	if err != nil {
		return nil, CatalogError(err)
	}
	if others := append(events.Others, dead.Others...); len(others) > 0 && !cfg.AllowSecondPipeline {
		// Each pipeline id keeps its own offsets: a second one reads the
		// topic again and stores every record twice.
		return nil, fmt.Errorf("%w: --pipeline-id=%s: %s or %s is already fed from --topic=%s by another writer, pipeline id %s; two pipeline ids store every record twice: use --pipeline-id=%s, other tables, or --allow-second-pipeline-id",
			ErrSecondPipeline, cfg.Pipeline, cfg.Table, cfg.DLQTable, cfg.Kafka.Topic, strings.Join(slices.Compact(others), ","), others[0])
	}
	policy := cfg.Start
	if len(events.Recreated)+len(dead.Recreated) > 0 {
		if cfg.OnRecreated != "earliest" {
			// The offsets the tables hold belong to a topic of the same
			// name that was deleted: starting from them would skip the new
			// topic's first records in silence.
			return nil, fmt.Errorf("%w: --topic=%s was deleted and created again (its id is now %s) since %s and %s recorded its offsets; to read the new topic from its start, pass --on-topic-recreated=earliest (the rows of the old topic stay in the tables)",
				ErrRecreated, cfg.Kafka.Topic, topic.ID(), cfg.Table, cfg.DLQTable)
		}
		policy = kafkaio.Earliest // the new topic, from its start
	}

	// Resume from the smallest offsets the two tables hold (each writer
	// drops what its own table already has), in at most --kafka-readers
	// groups, each one element of the read with one client. On Flink each
	// group's read is keyed by its element: the groups are spread over the
	// job's subtasks, one each when there are enough.
	src, err := topic.Plan(ctx, kafkaio.PlanOpts{
		Committed:   []offsets.Offsets{events.Committed, dead.Committed},
		Policy:      policy,
		Bounded:     cfg.Bounded,
		Readers:     cfg.Readers,
		Parallelism: func(groups int) int { p, _ := cfg.FlinkParallelism(groups); return p },
	})
	if err != nil {
		return nil, brokersError(cfg, err)
	}
	records := kafkaio.Read(s, src)
	good, bad := parseEvents(s, records, cfg.Registry)
	good = enrich.IngestedAt(s, good)
	bad = enrich.IngestedAt(s, bad)
	icebergio.Write(s, events, src.Start, good)
	icebergio.Write(s, dead, src.Start, bad)
	return &Plan{Source: src, Events: events, DeadLetter: dead}, nil
}

// brokersError names the flag of the brokers that an error of the Kafka
// planning came from.
func brokersError(cfg Config, err error) error {
	return fmt.Errorf("--brokers=%s: %w", strings.Join(cfg.Kafka.Brokers, ","), err)
}

// ErrIncomplete is returned when a bounded run ends with offsets it read
// that a table does not hold.
var ErrIncomplete = errors.New("run incomplete")

// CheckComplete checks, after a bounded run, that both tables hold every
// offset it read. A window that the runner lost would otherwise end the run
// with success and its rows in neither table (the next run would read them
// again: nothing is lost, but this run did not do its job).
func CheckComplete(cfg Config, pl *Plan, stats []icebergio.TableStat) error {
	for i, ident := range []string{cfg.Table, cfg.DLQTable} {
		if short := stats[i].Offsets.Behind(pl.Start, pl.End); len(short) > 0 {
			return fmt.Errorf("%w: %s does not hold %d ranges of offsets this run read (first %v); they are not lost: the next run reads them again from the table's offsets",
				ErrIncomplete, ident, len(short), short[0])
		}
	}
	return nil
}

// TableStats reads icebergio.Stat of the events and the dead letters'
// tables, in that order, through one catalog connection.
func TableStats(ctx context.Context, cfg Config) ([]icebergio.TableStat, error) {
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		return nil, CatalogError(err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	var out []icebergio.TableStat
	for _, ident := range []string{cfg.Table, cfg.DLQTable} {
		st, err := icebergio.Stat(ctx, cat, ident, cfg.Pipeline)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ErrSecondPipeline is returned when another pipeline id feeds the tables.
var ErrSecondPipeline = errors.New("another writer")

// ErrRecreated is returned when the topic was recreated under the tables.
var ErrRecreated = errors.New("topic recreated")

// CatalogError names the flag of a catalog that cannot be opened or
// reached; other errors (an incompatible table, say) name their table.
func CatalogError(err error) error {
	if errors.Is(err, icebergio.ErrWarehouse) {
		return fmt.Errorf("--warehouse: %w", err)
	}
	if errors.Is(err, icebergio.ErrCatalog) {
		return fmt.Errorf("--catalog-uri: %w", err)
	}
	return err
}
