package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/haade/haade/io/kafkaio/embedded"
	"github.com/haade/haade/testing/kafkatest"
)

// preloadChunk is how many events are generated and produced at a time, so
// that the generated values never all sit in memory next to the broker's
// copy and the preload's own peak stays small.
const preloadChunk = 250_000

// brokerPrefix starts the line on which a broker process reports itself.
const brokerPrefix = "BENCHMARK-BROKER "

// broker is the Kafka of one measurement, holding the backlog: in this
// process, or in a child process (--broker-process).
type broker struct {
	addrs     []string
	took      time.Duration
	rss       int64 // this process's resident set after the preload, garbage collected
	brokerRSS int64 // the broker process's resident set; 0 when in process
	close     func()
}

// startBroker starts a Kafka with the topic and preloads --events sample
// events, about --bad-ratio of them malformed (kafkatest.Sample, with
// event.MalformedCorpus), round-robin over the partitions.
func startBroker(ctx context.Context, cfg Config) (*broker, error) {
	if cfg.BrokerProcess {
		return startBrokerProcess(ctx, cfg)
	}
	started := time.Now()
	c, err := preload(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b := &broker{addrs: c.Brokers(), took: time.Since(started), close: c.Close}
	runtime.GC()
	debug.FreeOSMemory()
	b.rss = rss()
	return b, nil
}

func preload(ctx context.Context, cfg Config) (*embedded.Cluster, error) {
	c, err := kafkatest.Start(topic, cfg.Partitions)
	if err != nil {
		return nil, err
	}
	if err := produceSample(ctx, c.Brokers(), topic, cfg); err != nil {
		c.Close()
		return nil, fmt.Errorf("preload: %w", err)
	}
	return c, nil
}

// serveBroker is --mode=broker: it preloads an in-process Kafka, reports
// its addresses and resident set on stdout, and serves until stdin closes.
func serveBroker(ctx context.Context, cfg Config) error {
	started := time.Now()
	c, err := preload(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Printf("%s%s %d %d\n", brokerPrefix, strings.Join(c.Brokers(), ","), rss(), time.Since(started).Nanoseconds())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// startBrokerProcess runs this command with --mode=broker and waits for its
// report.
func startBrokerProcess(ctx context.Context, cfg Config) (*broker, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "--mode=broker", fmt.Sprintf("--events=%d", cfg.Events),
		fmt.Sprintf("--partitions=%d", cfg.Partitions), fmt.Sprintf("--bad-ratio=%g", cfg.BadRatio), fmt.Sprintf("--seed=%d", cfg.Seed), fmt.Sprintf("--keys=%d", cfg.Keys))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() {
		stdin.Close()
		_ = cmd.Wait()
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), brokerPrefix)
		if !ok {
			continue
		}
		b := &broker{close: stop}
		var addrs string
		var took int64
		if _, err := fmt.Sscanf(line, "%s %d %d", &addrs, &b.brokerRSS, &took); err != nil {
			stop()
			return nil, fmt.Errorf("broker process: %q: %v", line, err)
		}
		b.addrs, b.took = strings.Split(addrs, ","), time.Duration(took)
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		runtime.GC()
		debug.FreeOSMemory()
		b.rss = rss()
		return b, nil
	}
	stop()
	return nil, fmt.Errorf("broker process ended without reporting: %v", sc.Err())
}
