package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultTimeout is how long Open and Plan wait for the brokers when they
// are given no timeout: 20 s.
const DefaultTimeout = 20 * time.Second

// Topic is a Kafka topic opened to plan its read. Open validates the
// Config once, connects one admin client and describes the topic; Plan
// uses the same client, and Close releases it. A Topic is for one
// planning: it is not kept for the run.
type Topic struct {
	cfg     Config
	timeout time.Duration
	cl      *kgo.Client
	adm     *kadm.Client
	id      string
}

// Open validates cfg, connects to its brokers and describes cfg.Topic. It
// fails within timeout (DefaultTimeout when timeout <= 0) when no broker
// answers (ErrUnreachable), and fails for a topic that does not exist
// (ErrNoTopic), a Config that cannot work (ErrConfig) and a refusal of the
// brokers (ErrNotAuthorized). The caller closes the Topic.
func Open(ctx context.Context, cfg Config, timeout time.Duration) (*Topic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opts, err := cfg.ClientOptions()
	if err != nil {
		return nil, err
	}
	cl, err := newClient("admin/"+cfg.Topic, append(opts, kgo.RetryTimeout(timeout))...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	t := &Topic{cfg: cfg, timeout: timeout, cl: cl, adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	td, err := t.describe(ctx)
	if err != nil {
		t.Close()
		return nil, err
	}
	if td.ID != (kadm.TopicID{}) {
		t.id = td.ID.String()
	}
	return t, nil
}

// ID is the Kafka topic id, in kadm's base64 form, or "" when the brokers
// do not give topic ids. A topic that is deleted and created again under
// the same name gets a new id: the tables record the id with their offsets
// so that offsets of the old topic are never taken for the new one's.
func (t *Topic) ID() string { return t.id }

// Close closes the admin client.
func (t *Topic) Close() { t.adm.Close() }

// describe returns the topic's metadata; a missing topic is ErrNoTopic.
func (t *Topic) describe(ctx context.Context) (kadm.TopicDetail, error) {
	cfg := t.cfg
	topics, err := t.adm.ListTopics(ctx, cfg.Topic)
	if err != nil {
		if aerr := authzError(cfg, "list topics", err); aerr != nil {
			return kadm.TopicDetail{}, aerr
		}
		return kadm.TopicDetail{}, fmt.Errorf("%w: %s: %v", ErrUnreachable, strings.Join(cfg.Brokers, ","), err)
	}
	td, ok := topics[cfg.Topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return td, fmt.Errorf("%w: %q on %s", ErrNoTopic, cfg.Topic, strings.Join(cfg.Brokers, ","))
	}
	if td.Err != nil {
		if aerr := authzError(cfg, "describe topic", td.Err); aerr != nil {
			return td, aerr
		}
		return td, fmt.Errorf("%w: topic %q: %v", ErrUnreachable, cfg.Topic, td.Err)
	}
	return td, nil
}
