package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/haade/haade/io/kafkaio"
	"github.com/haade/haade/runners"
)

// Config is everything the producer needs. Every flag can also be set as
// HAADE_<FLAG>.
type Config struct {
	// Kafka holds the brokers (required), the topic, TLS and SASL.
	Kafka kafkaio.Config
	// Rate is events per second; 0 sends as fast as the brokers take them.
	Rate float64
	// Count is how many events to send; 0 sends until SIGINT or SIGTERM.
	Count int64
	// BadRatio is the fraction of events replaced by malformed values from
	// event.MalformedCorpus, in [0, 1].
	BadRatio float64
	// Seed makes the events deterministic (their times aside).
	Seed uint64
	// PartitionsCreate, when > 0, creates the topic with that many
	// partitions if it is missing.
	PartitionsCreate int
	// ReplicationFactor of a topic created by PartitionsCreate; -1 takes the
	// brokers' default.
	ReplicationFactor int
	// ConnectTimeout bounds the wait for a broker to answer at start.
	ConnectTimeout time.Duration
	// FlushTimeout bounds the wait for buffered records at the end.
	FlushTimeout time.Duration
	// MetricsAddr serves /metrics; empty turns it off.
	MetricsAddr string
	// LogFormat is text or json.
	LogFormat string
	// Schema is the schema registry, the schema to register, and whether
	// to write the wire format; see registry.go.
	Schema schemaConfig
}

// flags defines the command line on fs and returns a func that builds the
// Config after fs is parsed.
func flags(fs *flag.FlagSet) func() (Config, error) {
	kafka := kafkaio.ClientFlags(fs, "comma-separated Kafka bootstrap servers (required)")
	rate := fs.Float64("rate", 0, "events per second; 0 sends as fast as possible")
	count := fs.Int64("count", 0, "events to send; 0 sends until SIGINT or SIGTERM")
	bad := fs.Float64("bad-ratio", 0, "fraction of events that are malformed (from transforms/parse/event.MalformedCorpus), 0..1")
	seed := fs.Uint64("seed", 1, "random seed of the events")
	create := fs.Int("partitions-create", 0, "create the topic with N partitions if it is missing; 0 never creates it")
	rf := fs.Int("replication-factor", -1, "replication factor of a topic that --partitions-create makes; -1 is the brokers' default")
	connect := fs.Duration("connect-timeout", 20*time.Second, "how long to wait for a broker to answer at start")
	flush := fs.Duration("flush-timeout", 30*time.Second, "how long to wait for buffered records at the end")
	metrics := fs.String("metrics-addr", "", "address of /metrics, /healthz and /readyz, e.g. :9103; empty turns them off")
	logFormat := fs.String("log-format", "text", "text or json")
	schema := schemaFlags(fs)

	return func() (Config, error) {
		c := Config{
			Kafka: kafka(),
			Rate:  *rate, Count: *count, BadRatio: *bad, Seed: *seed, PartitionsCreate: *create,
			ReplicationFactor: *rf, ConnectTimeout: *connect, FlushTimeout: *flush,
			MetricsAddr: *metrics, LogFormat: *logFormat,
		}
		c.Schema = schema(c.Kafka.Topic)
		return c, c.validate()
	}
}

// validate checks the configuration; each error names its flag.
func (c Config) validate() error {
	if len(c.Kafka.Brokers) == 0 {
		return errors.New("--brokers: empty; give the Kafka bootstrap servers, e.g. --brokers=localhost:9092")
	}
	if c.Kafka.Topic == "" {
		return errors.New("--topic: empty")
	}
	if err := c.Kafka.Validate(); err != nil {
		return fmt.Errorf("--brokers/--kafka-*: %v", err)
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		return fmt.Errorf("--rate=%v: want events per second >= 0 (0: as fast as possible)", c.Rate)
	}
	if c.Count < 0 {
		return fmt.Errorf("--count=%d: want >= 0 (0: until interrupted)", c.Count)
	}
	if !(c.BadRatio >= 0 && c.BadRatio <= 1) {
		return fmt.Errorf("--bad-ratio=%v: want a fraction between 0 and 1", c.BadRatio)
	}
	if c.PartitionsCreate < 0 || c.PartitionsCreate > math.MaxInt32 {
		return fmt.Errorf("--partitions-create=%d: want >= 0", c.PartitionsCreate)
	}
	if c.ReplicationFactor == 0 || c.ReplicationFactor < -1 || c.ReplicationFactor > math.MaxInt16 {
		return fmt.Errorf("--replication-factor=%d: want -1 (the brokers' default) or >= 1", c.ReplicationFactor)
	}
	if c.ConnectTimeout <= 0 {
		return fmt.Errorf("--connect-timeout=%v: want > 0", c.ConnectTimeout)
	}
	if c.FlushTimeout <= 0 {
		return fmt.Errorf("--flush-timeout=%v: want > 0", c.FlushTimeout)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format=%q: want text or json", c.LogFormat)
	}
	return c.Schema.validate()
}

// newFlagSet returns the command's flag set; it runs no Beam pipeline, so
// it has none of Beam's flags.
func newFlagSet() *flag.FlagSet { return runners.ToolFlagSet("produce") }

// parseArgs parses a command line (without the program name) and the
// environment, as main does.
func parseArgs(args []string, getenv func(string) string) (Config, error) {
	return runners.ParseConfig(newFlagSet(), args, getenv, flags)
}
