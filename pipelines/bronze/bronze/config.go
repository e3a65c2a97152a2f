package bronze

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/route"
	"github.com/haade/haade/transforms/tables"
)

// Config is everything the bronze pipeline needs; see docs/DESIGN.md,
// "Command line". Every flag can also be set as HAADE_<FLAG>.
type Config struct {
	// Common: --runner, --endpoint, --pipeline-id, --metrics-addr,
	// --log-format, --lineage and --bounded (read up to the end offsets
	// seen at start, commit, and exit).
	runners.Common
	// Kafka holds the brokers, the topic, TLS and SASL. Brokers are
	// required, except for the embedded demo (Demo). Its Topic is
	// --topic's value: one topic, or several separated by commas (Topics);
	// KafkaOf gives the Config of one of them.
	Kafka kafkaio.Config
	// Catalog says where the tables live.
	Catalog icebergio.CatalogConfig
	// Table and DLQTable are "namespace.table". With Routes, the events go
	// to the routes' tables instead of Table (EventTables).
	Table, DLQTable string
	// Routes sends each event to one of several tables, by its topic or a
	// member of the event (--route; see transforms/route). Nil: every
	// event goes to Table.
	Routes *route.Rules
	// Upsert makes Table hold the latest event of each Kafka key
	// (--upsert): a tombstone, or an event whose "op" is "delete", deletes
	// its key; a record without a key is a dead letter.
	Upsert bool
	// CommitInterval is the window length: one snapshot per interval.
	CommitInterval time.Duration
	// Start is where partitions begin when the tables hold no offsets.
	Start kafkaio.StartPolicy
	// Readers is the most groups the topic's partitions are dealt into
	// (kafkaio.PlanOpts.Readers): each group is one element of the read, with one
	// Kafka client, and on Flink one subtask. Default 8.
	Readers int
	// Demo runs the embedded demo: an in-process Kafka, sample events, and
	// a bounded run. It is on when --demo is given, and when no Kafka,
	// catalog or warehouse setting is (by flag or HAADE_* variable): so
	// a deployment whose broker list is missing fails, naming --brokers,
	// instead of writing sample events into its catalog.
	Demo bool
	// DemoEvents is how many sample events the embedded demo produces.
	DemoEvents int
	// Progress prints a progress line every 5 s (always on a terminal).
	Progress bool
	// OnRecreated says what to do when the topic was deleted and created
	// again since the tables recorded its offsets: "fail" (refuse to start)
	// or "earliest" (read the new topic from its start).
	OnRecreated string
	// AllowSecondPipeline lets this pipeline id write tables that another
	// pipeline id already feeds from the same topic.
	AllowSecondPipeline bool
	// Registry is the schema registry (empty URL: plain JSON only, parsed
	// as before); see registry.go.
	Registry registryio.Config
}

// Flags defines bronze's command line on fs and returns a func that builds the
// Config after fs is parsed.
func Flags(fs *flag.FlagSet) func() (Config, error) {
	common := runners.CommonFlags(fs, runners.Defaults{Pipeline: "bronze", MetricsAddr: runners.DefaultMetricsAddr,
		Bounded: "read up to the end offsets seen at start, commit, and exit 0"})
	kafka := kafkaio.ClientFlags(fs, "comma-separated Kafka bootstrap servers; required unless the embedded demo runs (see --demo)")
	fs.Lookup("topic").Usage = "Kafka topic, or several separated by commas, read in one job (see --route)"
	catalog := icebergio.CatalogFlags(fs)
	tbl := fs.String("table", tables.Bronze.Ident, "bronze table, namespace.table")
	dlq := fs.String("dlq-table", tables.DeadLetters.Ident, "dead-letter table, namespace.table")
	interval := fs.Duration("commit-interval", 10*time.Second, "window length: one snapshot per interval")
	start := fs.String("start", "earliest", "where to begin when the tables hold no offsets: earliest or latest")
	demo := fs.Bool("demo", false, "run the embedded demo: an in-process Kafka, sample events, a bounded run; the default when no Kafka, catalog or warehouse setting is given")
	demoEvents := fs.Int("demo-events", 5000, "events the embedded demo produces")
	progress := fs.Bool("progress", false, "print a progress line every 5s (always on when stderr is a terminal)")
	onRecreated := fs.String("on-topic-recreated", "fail", "when --topic was deleted and created again since the tables recorded its offsets: fail, or earliest to read the new topic from its start")
	allowSecond := fs.Bool("allow-second-pipeline-id", false, "write tables that another --pipeline-id already feeds from --topic (each stores every record once)")
	readUncommitted := fs.Bool("kafka-read-uncommitted", false, "also read records of open and aborted transactions")
	clientMetrics := fs.Bool("kafka-client-metrics-per-partition", false, "serve franz-go's kgo_* metrics per reader's client, with the request-duration histogram (default: summed per read, no histogram)")
	readers := fs.Int("kafka-readers", kafkaio.DefaultReaders, "the most readers of the topic: its partitions are dealt into this many groups, each read by one Kafka client (on Flink: the read's parallelism); a topic with fewer partitions gets one reader per partition")
	registry := registryFlags(fs)
	upsert := fs.Bool("upsert", false, "keep in --table only the latest event of each Kafka key (by offset): a tombstone, or an event with \"op\": \"delete\", deletes its key, and a record without a key is a dead letter; the table must be of format version 2; with --route, a key lives in the table of its latest event, and events of two topics may not reach one table (see docs/DESIGN.md, \"Upserts\")")
	routes := fs.String("route", "", "send each event to a table chosen by its topic or a member of the event, instead of --table: comma-separated rules FIELD=V1|V2[&FIELD=...]:TABLE, the first that matches wins, {FIELD} in TABLE stands for the value, * matches every event; an event no rule matches is a dead letter (see docs/DESIGN.md, \"Routing\")")

	return func() (Config, error) {
		c := Config{
			Kafka:   kafka(),
			Catalog: catalog(),
			Table:   *tbl, DLQTable: *dlq, CommitInterval: *interval, Start: kafkaio.StartPolicy(*start),
			Demo: *demo || !deployment(fs), DemoEvents: *demoEvents, Progress: *progress, OnRecreated: *onRecreated, AllowSecondPipeline: *allowSecond,
		}
		c.Kafka.ReadUncommitted = *readUncommitted
		c.Kafka.ClientMetricsPerPartition = *clientMetrics
		c.Readers = *readers
		c.Upsert = *upsert
		c.Registry = registry(c.Kafka.Topic)
		var err error
		if *routes != "" {
			if c.Routes, err = route.Parse(*routes); err != nil {
				return c, fmt.Errorf("--route: %v", err)
			}
		}
		if c.Common, err = common(); err != nil {
			return c, err
		}
		return c, c.Validate()
	}
}

// deploymentFlags are the settings that say where a deployment's data
// lives: any of them given means a real deployment, never the demo.
var deploymentFlags = []string{"brokers", "topic", "kafka-tls", "kafka-tls-ca", "kafka-tls-cert", "kafka-tls-key",
	"kafka-tls-insecure-skip-verify", "kafka-sasl-mechanism", "kafka-sasl-user", "kafka-sasl-password",
	"catalog", "catalog-name", "catalog-uri", "warehouse", "s3-endpoint"}

// deployment reports whether fs, once parsed (flagenv.Parse, which sets
// flags from HAADE_* variables too), was given a Kafka, catalog or
// warehouse setting.
func deployment(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || slices.Contains(deploymentFlags, f.Name) })
	return given
}

// Topics returns the topics of --topic, in its order.
func (c Config) Topics() []string {
	var out []string
	for _, t := range strings.Split(c.Kafka.Topic, ",") {
		out = append(out, strings.TrimSpace(t))
	}
	return out
}

// KafkaOf returns the Kafka configuration of one of Topics.
func (c Config) KafkaOf(topic string) kafkaio.Config {
	k := c.Kafka
	k.Topic = topic
	return k
}

// EventTables returns the tables the events go to: the routes' tables, or
// Table.
func (c Config) EventTables() []string {
	if c.Routes != nil {
		return c.Routes.Tables()
	}
	return []string{c.Table}
}

// AllTables returns EventTables and then DLQTable: every table the
// pipeline writes.
func (c Config) AllTables() []string {
	return append(c.EventTables(), c.DLQTable)
}

// Validate checks the configuration; each error names its flag.
func (c Config) Validate() error {
	topics := c.Topics()
	for i, t := range topics {
		if t == "" {
			return fmt.Errorf("--topic=%q: an empty topic", c.Kafka.Topic)
		}
		if slices.Contains(topics[:i], t) {
			return fmt.Errorf("--topic=%q: %s twice", c.Kafka.Topic, t)
		}
	}
	if len(c.Kafka.Brokers) > 0 {
		if err := c.KafkaOf(topics[0]).Validate(); err != nil {
			return fmt.Errorf("--brokers/--kafka-*: %v", err)
		}
	}
	if c.Catalog.Type != "sql" && c.Catalog.Type != "rest" {
		return fmt.Errorf("--catalog=%q: want sql or rest", c.Catalog.Type)
	}
	if _, err := c.Catalog.Properties(); err != nil {
		if strings.Contains(err.Error(), "warehouse") {
			return fmt.Errorf("--warehouse: %v", err)
		}
		return fmt.Errorf("--catalog-uri: %v", err)
	}
	if strings.HasPrefix(c.Catalog.Warehouse, "s3") && c.Catalog.S3Endpoint == "" && c.Catalog.Type == "sql" {
		// AWS S3 proper needs no endpoint; MinIO does. Both are allowed.
	}
	if c.Catalog.S3Endpoint != "" && !strings.HasPrefix(c.Catalog.S3Endpoint, "http://") && !strings.HasPrefix(c.Catalog.S3Endpoint, "https://") {
		return fmt.Errorf("--s3-endpoint=%q: want http(s)://host:port", c.Catalog.S3Endpoint)
	}
	if _, err := icebergio.Identifier(c.Table); err != nil {
		return fmt.Errorf("--table: %v", err)
	}
	if _, err := icebergio.Identifier(c.DLQTable); err != nil {
		return fmt.Errorf("--dlq-table: %v", err)
	}
	if c.Routes == nil && c.Table == c.DLQTable {
		return fmt.Errorf("--dlq-table: must differ from --table (%s)", c.Table)
	}
	if c.Routes != nil {
		for _, t := range c.Routes.Tables() {
			if _, err := icebergio.Identifier(t); err != nil {
				return fmt.Errorf("--route: table %s: %v", t, err)
			}
			if t == c.DLQTable {
				return fmt.Errorf("--route: table %s is --dlq-table", t)
			}
		}
	}
	if c.Upsert {
		if err := c.upsertTopics(topics); err != nil {
			return err
		}
	}
	if len(topics) > 1 && (c.Registry.URL != "" || c.Registry.Validate) {
		// The registry's subject is the topic's (TopicNameStrategy).
		return fmt.Errorf("--schema-registry: one --topic only, not %d (%s)", len(topics), c.Kafka.Topic)
	}
	if c.CommitInterval < 100*time.Millisecond || c.CommitInterval > 24*time.Hour || (24*time.Hour)%c.CommitInterval != 0 {
		return fmt.Errorf("--commit-interval=%v: want between 100ms and 24h, dividing a day", c.CommitInterval)
	}
	if c.OnRecreated != "fail" && c.OnRecreated != "earliest" {
		return fmt.Errorf("--on-topic-recreated=%q: want fail or earliest", c.OnRecreated)
	}
	if c.Start != kafkaio.Earliest && c.Start != kafkaio.Latest {
		return fmt.Errorf("--start=%q: want earliest or latest", c.Start)
	}
	if c.Readers < 1 {
		return fmt.Errorf("--kafka-readers=%d: want at least 1", c.Readers)
	}
	if err := registryio.CheckFlags(c.Registry); err != nil {
		return err
	}
	if c.DemoEvents < 0 {
		return fmt.Errorf("--demo-events=%d: want >= 0", c.DemoEvents)
	}
	// Last, so that a bad value of another flag is named first.
	if len(c.Kafka.Brokers) == 0 && !c.Demo {
		return errors.New("--brokers: no Kafka bootstrap servers given (HAADE_BROKERS); the embedded demo runs only with no Kafka, catalog or warehouse setting, or with --demo")
	}
	if len(topics) > 1 && c.Demo {
		return fmt.Errorf("--topic=%s: the embedded demo produces to one topic", c.Kafka.Topic)
	}
	if len(c.Kafka.Brokers) > 0 && c.Demo {
		return fmt.Errorf("--demo: the embedded demo runs its own Kafka; it cannot read --brokers=%s", strings.Join(c.Kafka.Brokers, ","))
	}
	return nil
}

// upsertTopics refuses an upsert table that events of two topics can reach:
// it keeps the latest row of each key by offset, and the offsets of two
// topics do not order each other.
func (c *Config) upsertTopics(topics []string) error {
	if c.Routes == nil {
		if len(topics) > 1 {
			return fmt.Errorf("--upsert: --table=%s would hold the keys of %d topics (%s), whose offsets do not order each other: give each topic tables of its own with --route", c.Table, len(topics), c.Kafka.Topic)
		}
		return nil
	}
	all := c.Routes.Tables()
	from := map[int]string{}
	for _, topic := range topics {
		for _, i := range c.Routes.TopicTables(topic) {
			if other, ok := from[i]; ok {
				return fmt.Errorf("--upsert: --route can send events of both %s and %s to %s, whose offsets do not order each other: route each topic to tables of its own", other, topic, all[i])
			}
			from[i] = topic
		}
	}
	return nil
}
