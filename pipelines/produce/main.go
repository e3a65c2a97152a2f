// Command produce publishes realistic fintech-debt events to a Kafka topic
// (fintech.debt.raw by default): at a rate or as fast as possible, a count
// or until interrupted, with a share of malformed records. It reports what
// the brokers acknowledged, and serves Prometheus metrics.
//
//	go run ./pipelines/produce --brokers=localhost:9092 --rate=1000 --count=60000 --bad-ratio=0.01
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/obs"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The metrics this command serves.
func init() {
	obs.MustRegister(producedRecords, producedBytes, produceErrors, produceLatency, produceTargetRate)
}

func main() {
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		slog.Info("stopping: flushing what is buffered")
		close(stop)
		<-sigs
		slog.Error("second signal: exiting without waiting for acknowledgements")
		os.Exit(130)
	}()
	os.Exit(run(stop, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole command; closing stop ends the sending early.
func run(stop <-chan struct{}, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, code, ok := runners.Tool(newFlagSet(), args, getenv, stdout, stderr, flags)
	if !ok {
		return code
	}
	_ = obs.SetupLogging(stderr, cfg.LogFormat)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := obs.Serve(ctx, cfg.MetricsAddr); err != nil {
		fmt.Fprintf(stderr, "produce: %v\n", err)
		return 2
	}

	opts, err := cfg.Kafka.ClientOptions()
	if err != nil {
		fmt.Fprintf(stderr, "produce: --kafka-*: %v\n", err)
		return 2
	}
	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(cfg.Kafka.Topic),
		kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))...)
	if err != nil {
		fmt.Fprintf(stderr, "produce: --brokers=%s: %v\n", strings.Join(cfg.Kafka.Brokers, ","), err)
		return 2
	}
	defer cl.Close()
	partitions, err := checkTopic(ctx, cl, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "produce: %v\n", err)
		return 2
	}
	schemaID, err := setupSchema(ctx, cfg.Schema, cfg.ConnectTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "produce: %v\n", err)
		return 2
	}
	obs.SetReady(true)
	slog.Info("producing", "topic", cfg.Kafka.Topic, "partitions", partitions, "rate", cfg.Rate,
		"count", cfg.Count, "bad_ratio", cfg.BadRatio, "seed", cfg.Seed)
	r := produce(stop, cl, cfg, schemaID)
	fmt.Fprintf(stdout, "produce: %s to %s\n", r, cfg.Kafka.Topic)
	if r.Failed > 0 {
		return 1
	}
	return 0
}
