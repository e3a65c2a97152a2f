package kafkaio

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/plugin/kslog"
)

// Config configures Open and the Read it plans. It is serialised into the
// pipeline, so every field is plain data.
type Config struct {
	// Brokers are the bootstrap servers. Required.
	Brokers []string
	// Topic to read. Required.
	Topic string

	// TLS turns on TLS. TLSCAFile, TLSCertFile and TLSKeyFile are PEM files;
	// all optional (the system roots are used without a CA file).
	TLS                   bool
	TLSCAFile             string
	TLSCertFile           string
	TLSKeyFile            string
	TLSInsecureSkipVerify bool

	// SASLMechanism is "", "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512".
	SASLMechanism string
	SASLUser      string
	// SASLPassword is the password. It is never serialized: a worker reads
	// it from its environment (see EnvSASLPassword).
	SASLPassword string

	// ReadUncommitted reads records of open and aborted transactions too.
	// Default false: read_committed, as a lakehouse should.
	ReadUncommitted bool

	// BatchSize is the most records in one Batch. Default 4096.
	BatchSize int
	// CallDuration bounds one ProcessElement call; the read self-checkpoints
	// after it. Default 250ms; at most 1s. A partition's watermark moves at
	// the end of a call, and the bundle that holds the calls of several
	// partitions ends after all of them, so shorter calls commit windows
	// sooner: with 2M events backlogged on 8 partitions, every row was
	// visible after 4.8-6.0 s instead of 6.8-7.5 s with 1 s calls, at the
	// same events/s and CPU (testing/sidebyside, testing/benchmark).
	CallDuration time.Duration
	// BehindCallDuration is how long a call reads instead, once a poll
	// finds its partition more than BehindRecords behind the log's end: a
	// backlog is read in long calls, a live stream in short ones. Default
	// 1s, at most 1s, never less than CallDuration.
	BehindCallDuration time.Duration
	// BehindRecords is how many records behind the log's end a partition
	// must be for a long call. Default 100,000: a live stream of 100k
	// events/s on 8 partitions falls about 25k behind while the other
	// partitions' calls run.
	BehindRecords int64
	// IdleWait is how long a caught-up partition waits before it polls
	// again. Default 100ms.
	IdleWait time.Duration
	// CaughtUpWait is how long a live partition that a call read up to the
	// log's end waits before its next call: bundles, and so data files, of
	// at least that spacing, at the cost of as much freshness. Default 50ms.
	CaughtUpWait time.Duration
	// FetchMaxPartitionBytes bounds one fetch of one partition. Default
	// DefaultFetchMaxPartitionBytes. Each group holds up to two fetches
	// ahead, decompressed, while the bundle reads other groups (the one
	// franz-go buffers and the poll consumer.prefetch holds): with a
	// backlog, 8 MiB per partition held about 1 GB for 8 partitions
	// (testing/benchmark, before the prefetch). A fetch of a group's
	// client carries at most 8 MiB (maxGroupFetchBytes).
	FetchMaxPartitionBytes int32
	// ClientMetricsPerPartition serves franz-go's client metrics (kgo_*)
	// of each group's client (client="read/TOPIC/GROUP") on its own, with
	// the request-duration histogram. The name is older than groups: a
	// client read one partition then. Default false: the read's clients
	// are summed into one series per read, broker and topic
	// (client="read/TOPIC"), without histograms.
	ClientMetricsPerPartition bool
}

// DefaultFetchMaxPartitionBytes is 512 KiB, half of Kafka's own
// max.partition.fetch.bytes: about one Batch (4096 records of 130 bytes)
// a fetch. Against 1 MiB, a 5M backlog was read 3-4% faster with a fifth
// less peak memory (testing/benchmark, interleaved runs); 4 MiB was
// slower still and doubled it. A fetch is decoded one poll ahead
// (consumer.prefetch), which hides the extra round trips.
const DefaultFetchMaxPartitionBytes = 512 << 10

func (c Config) withDefaults() Config {
	if c.BatchSize <= 0 {
		c.BatchSize = 4096
	}
	if c.CallDuration <= 0 {
		c.CallDuration = 250 * time.Millisecond
	}
	c.CallDuration = min(c.CallDuration, time.Second)
	if c.BehindCallDuration <= 0 {
		c.BehindCallDuration = time.Second
	}
	c.BehindCallDuration = max(c.CallDuration, min(c.BehindCallDuration, time.Second))
	if c.BehindRecords <= 0 {
		c.BehindRecords = 100_000
	}
	if c.IdleWait <= 0 {
		c.IdleWait = 100 * time.Millisecond
	}
	if c.CaughtUpWait <= 0 {
		c.CaughtUpWait = 50 * time.Millisecond
	}
	if c.FetchMaxPartitionBytes <= 0 {
		c.FetchMaxPartitionBytes = DefaultFetchMaxPartitionBytes
	}
	return c
}

// Validate checks the configuration once, after all fields are set.
func (c Config) Validate() error {
	if len(c.Brokers) == 0 {
		return fmt.Errorf("%w: no brokers", ErrConfig)
	}
	for _, b := range c.Brokers {
		if b == "" || strings.ContainsAny(b, " /") || !strings.Contains(b, ":") {
			return fmt.Errorf("%w: broker %q is not host:port", ErrConfig, b)
		}
	}
	if c.Topic == "" {
		return fmt.Errorf("%w: no topic", ErrConfig)
	}
	switch strings.ToUpper(c.SASLMechanism) {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return fmt.Errorf("%w: SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", ErrConfig, c.SASLMechanism)
	}
	if c.SASLMechanism != "" && c.SASLUser == "" {
		return fmt.Errorf("%w: SASL %s needs a user", ErrConfig, c.SASLMechanism)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return fmt.Errorf("%w: a TLS client certificate needs both a cert and a key file", ErrConfig)
	}
	if _, err := c.tlsConfig(); err != nil {
		return err
	}
	return nil
}

// ClientOptions returns the franz-go options for brokers, TLS and SASL.
func (c Config) ClientOptions() ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.ClientID("haade")}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	pass := c.saslPassword()
	switch strings.ToUpper(c.SASLMechanism) {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.SASLUser, Pass: pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: pass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: pass}.AsSha512Mechanism()))
	}
	return opts, nil
}

func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.TLS && c.TLSCAFile == "" && c.TLSCertFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.TLSInsecureSkipVerify}
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS CA file: %v", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: TLS CA file %s holds no PEM certificate", ErrConfig, c.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if c.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS client certificate: %v", ErrConfig, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// consumerOptions are the options of a client that reads the partitions of
// at, each from its offset. Offsets are never reset silently: an
// out-of-range offset is an error. Control records are kept so that the
// read can step over transaction markers and still claim every offset.
func (c Config) consumerOptions(at map[int32]int64) ([]kgo.Opt, error) {
	opts, err := c.ClientOptions()
	if err != nil {
		return nil, err
	}
	iso := kgo.ReadCommitted()
	if c.ReadUncommitted {
		iso = kgo.ReadUncommitted()
	}
	offs := make(map[int32]kgo.Offset, len(at))
	for p, o := range at {
		offs[p] = kgo.NewOffset().At(o)
	}
	return append(opts,
		kgo.WithLogger(clientLogger()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.Topic: offs}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(),
		kgo.WithPools(recordSlices),
		kgo.FetchMaxPartitionBytes(c.FetchMaxPartitionBytes),
		kgo.FetchMaxBytes(groupFetchBytes(c.FetchMaxPartitionBytes, len(at))),
		kgo.FetchMaxWait(200*time.Millisecond),
	), nil
}

// maxGroupFetchBytes bounds one fetch of a group's client: 8 MiB, against
// franz-go's default of 50 MiB. A group holds up to three fetches,
// decompressed (the one franz-go buffers, the poll consumer.prefetch
// holds, and the one the call cuts into batches), so 8 groups hold at most
// about 200 MiB however many partitions they read.
const maxGroupFetchBytes = 8 << 20

// groupFetchBytes is the most one fetch of a client of n partitions
// carries: a partition's bytes each, up to maxGroupFetchBytes, and never
// less than one partition's.
func groupFetchBytes(perPartition int32, n int) int32 {
	return max(perPartition, int32(min(int64(perPartition)*int64(n), maxGroupFetchBytes)))
}

// unbounded is the end of a restriction with no end.
const unbounded = math.MaxInt64

// clientLogger sends the read's franz-go log lines (a broker that went
// away, a connection that failed, retries) to the process's slog logger, at
// warning and above: its info lines are per connection and metadata
// refresh. The short-lived clients that plan a read at start log nothing:
// their failure is one error line that names --brokers.
func clientLogger() kgo.Logger {
	return warnLogger{kslog.New(slog.Default().With("component", "franz-go"))}
}

type warnLogger struct{ *kslog.Logger }

// Level is the slog logger's level, but never more detailed than warnings.
func (l warnLogger) Level() kgo.LogLevel { return min(l.Logger.Level(), kgo.LogLevelWarn) }
