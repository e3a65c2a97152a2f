package bronze

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/transforms/enrich"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
	"github.com/haade/haade/transforms/tables"
)

// Plan is what Build found out before wiring: the planned Kafka read of
// each topic (its partitions and where each one starts and, bounded, ends,
// and the groups they are read in) and the tables.
type Plan struct {
	// Sources holds the read of each topic of --topic, in its order.
	Sources []*kafkaio.Source
	// Start and End merge the Sources' (see kafkaio.Source): every
	// topic's partitions.
	Start, End offsets.Offsets
	// Events holds a sink per events table, in Config.EventTables' order.
	Events     []*icebergio.Sink
	DeadLetter *icebergio.Sink
}

// Partitions returns how many partitions the run reads, of every topic.
func (p *Plan) Partitions() int {
	n := 0
	for _, src := range p.Sources {
		n += len(src.Partitions)
	}
	return n
}

// Readers returns how many readers (groups of partitions, each one Kafka
// client) the run has, of every topic.
func (p *Plan) Readers() int {
	n := 0
	for _, src := range p.Sources {
		n += len(src.Groups)
	}
	return n
}

// Parallelism returns the most groups of one topic: on Flink, each topic's
// groups are spread over the same subtasks, one group each when there are
// enough.
func (p *Plan) Parallelism() int {
	n := 0
	for _, src := range p.Sources {
		n = max(n, len(src.Groups))
	}
	return n
}

// Build prepares the tables, plans the Kafka read of every topic from their
// offsets, and wires the pipeline: Kafka, parse (and route), enrich,
// Iceberg.
func Build(ctx context.Context, s beam.Scope, cfg Config) (*Plan, error) {
	if err := cfg.Catalog.Check(ctx); err != nil {
		return nil, CatalogError(err)
	}
	names := cfg.Topics()
	var topics []*kafkaio.Topic
	defer func() {
		for _, t := range topics {
			t.Close()
		}
	}()
	ids := icebergio.TopicIDs{}
	for _, name := range names {
		topic, err := kafkaio.Open(ctx, cfg.KafkaOf(name), kafkaio.DefaultTimeout)
		if err != nil {
			return nil, brokersError(cfg, err)
		}
		topics = append(topics, topic)
		ids[name] = topic.ID()
	}
	opts := []icebergio.Option{icebergio.Topics(ids), icebergio.Every(cfg.CommitInterval)}
	if cfg.Bounded {
		opts = append(opts, icebergio.Bounded())
	}
	pl := &Plan{Start: offsets.Offsets{}, End: offsets.Offsets{}}
	for _, ident := range cfg.EventTables() {
		t, eopts := tables.Bronze.As(ident), opts
		if cfg.Upsert {
			t = upsertTable(t)
			eopts = append(slices.Clone(opts), icebergio.Upsert("kafka_key", "kafka_partition", "kafka_offset"))
		}
		events, err := icebergio.Open(ctx, cfg.Catalog, t, cfg.Pipeline, eopts...)
		if err != nil {
			return nil, CatalogError(err)
		}
		pl.Events = append(pl.Events, events)
	}
	dead, err := icebergio.Open(ctx, cfg.Catalog, tables.DeadLetters.As(cfg.DLQTable), cfg.Pipeline, opts...)
	if err != nil {
		return nil, CatalogError(err)
	}
	pl.DeadLetter = dead
	sinks := append(slices.Clone(pl.Events), dead)
	var others, recreated []string
	for _, sink := range sinks {
		others = append(others, sink.Others...)
		recreated = append(recreated, sink.Recreated...)
	}
	slices.Sort(others)
	slices.Sort(recreated)
	others, recreated = slices.Compact(others), slices.Compact(recreated)
	tablesList := strings.Join(append(cfg.EventTables(), cfg.DLQTable), ", ")
	if len(others) > 0 && !cfg.AllowSecondPipeline {
		// Each pipeline id keeps its own offsets: a second one reads the
		// topic again and stores every record twice.
		return nil, fmt.Errorf("%w: --pipeline-id=%s: a table of %s is already fed from --topic=%s by another writer, pipeline id %s; two pipeline ids store every record twice: use --pipeline-id=%s, other tables, or --allow-second-pipeline-id",
			ErrSecondPipeline, cfg.Pipeline, tablesList, cfg.Kafka.Topic, strings.Join(others, ","), others[0])
	}
	policy := cfg.Start
	if len(recreated) > 0 {
		if cfg.OnRecreated != "earliest" {
			// The offsets the tables hold belong to a topic of the same
			// name that was deleted: starting from them would skip the new
			// topic's first records in silence.
			var now []string
			for _, t := range recreated {
				now = append(now, fmt.Sprintf("%s is now %s", t, ids[t]))
			}
			return nil, fmt.Errorf("%w: --topic=%s: %s was deleted and created again (its id: %s) since %s recorded its offsets; to read the new topic from its start, pass --on-topic-recreated=earliest (the rows of the old topic stay in the tables)",
				ErrRecreated, cfg.Kafka.Topic, strings.Join(recreated, ", "), strings.Join(now, ", "), tablesList)
		}
		policy = kafkaio.Earliest // the new topic, from its start
	}

	// Resume from the smallest offsets the tables hold (each writer drops
	// what its own table already has), in at most --kafka-readers groups
	// per topic, each one element of the read with one client. On Flink
	// each group's read is keyed by its element: the groups are spread over
	// the job's subtasks, one each when there are enough.
	committed := make([]offsets.Offsets, len(sinks))
	for i, sink := range sinks {
		committed[i] = sink.Committed
	}
	var reads []beam.PCollection
	for _, topic := range topics {
		src, err := topic.Plan(ctx, kafkaio.PlanOpts{
			Committed:   committed,
			Policy:      policy,
			Bounded:     cfg.Bounded,
			Readers:     cfg.Readers,
			Parallelism: func(groups int) int { p, _ := cfg.FlinkParallelism(groups); return p },
		})
		if err != nil {
			return nil, brokersError(cfg, err)
		}
		pl.Sources = append(pl.Sources, src)
		pl.Start.Max(src.Start)
		pl.End.Max(src.End)
		reads = append(reads, kafkaio.Read(s, src))
	}
	records := reads[0]
	if len(reads) > 1 {
		records = beam.Flatten(s, reads...)
	}
	var popts []parse.Option
	if cfg.Routes != nil {
		popts = append(popts, parse.Routes(cfg.Routes))
	}
	if cfg.Upsert {
		popts = append(popts, parse.Keyed())
	}
	good, bad := parseEvents(s, records, cfg.Registry, popts...)
	good = enrich.IngestedAt(s, good)
	bad = enrich.IngestedAt(s, bad)
	for i, events := range parse.Split(s, len(pl.Events), good) {
		icebergio.Write(s, pl.Events[i], pl.Start, events)
	}
	icebergio.Write(s, dead, pl.Start, bad)
	return pl, nil
}

// upsertTable is t, created (when missing) with copy-on-write deletes, as
// icebergio.Upsert needs.
func upsertTable(t tables.Table) tables.Table {
	props := maps.Clone(t.Properties)
	if props == nil {
		props = map[string]string{}
	}
	props["write.delete.mode"] = "copy-on-write"
	t.Properties = props
	return t
}

// brokersError names the flag of the brokers that an error of the Kafka
// planning came from.
func brokersError(cfg Config, err error) error {
	return fmt.Errorf("--brokers=%s: %w", strings.Join(cfg.Kafka.Brokers, ","), err)
}

// ErrIncomplete is returned when a bounded run ends with offsets it read
// that a table does not hold.
var ErrIncomplete = errors.New("run incomplete")

// CheckComplete checks, after a bounded run, that every table holds every
// offset it read (stats in the order of TableStats). A window that the runner lost would otherwise end the run
// with success and its rows in neither table (the next run would read them
// again: nothing is lost, but this run did not do its job).
func CheckComplete(cfg Config, pl *Plan, stats []icebergio.TableStat) error {
	for i, ident := range cfg.AllTables() {
		if short := stats[i].Offsets.Behind(pl.Start, pl.End); len(short) > 0 {
			return fmt.Errorf("%w: %s does not hold %d ranges of offsets this run read (first %v); they are not lost: the next run reads them again from the table's offsets",
				ErrIncomplete, ident, len(short), short[0])
		}
	}
	return nil
}

// TableStats reads icebergio.Stat of the events tables and the dead
// letters' table, in the order of Config.AllTables, through one catalog
// connection.
func TableStats(ctx context.Context, cfg Config) ([]icebergio.TableStat, error) {
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		return nil, CatalogError(err)
	}
	if c, ok := cat.(catalog.Closer); ok {
		defer c.Close()
	}
	var out []icebergio.TableStat
	for _, ident := range cfg.AllTables() {
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
