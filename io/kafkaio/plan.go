package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// StartPolicy says where a partition with no committed offset begins.
type StartPolicy string

const (
	Earliest StartPolicy = "earliest"
	Latest   StartPolicy = "latest"
)

// Plan lists the topic's partitions with the restriction each one reads:
// from committed[partition] when the tables hold an offset for it, else from
// the policy's offset; up to the end offsets of this moment when bounded,
// else without end. A committed offset outside the log is an error, never a
// silent reset. It fails within timeout when no broker answers.
func Plan(ctx context.Context, cfg Config, committed map[int32]int64, policy StartPolicy, bounded bool, timeout time.Duration) ([]Partition, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if policy != Earliest && policy != Latest {
		return nil, fmt.Errorf("%w: start %q: want earliest or latest", ErrConfig, policy)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	adm, td, err := describe(ctx, cfg, timeout)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	starts, err := adm.ListStartOffsets(ctx, cfg.Topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		if aerr := authzError(cfg, "list start offsets", err); aerr != nil {
			return nil, aerr
		}
		return nil, fmt.Errorf("%w: list start offsets: %v", ErrUnreachable, err)
	}
	// A read_committed consumer stops at the last stable offset.
	var ends kadm.ListedOffsets
	if cfg.ReadUncommitted {
		ends, err = adm.ListEndOffsets(ctx, cfg.Topic)
	} else {
		ends, err = adm.ListCommittedOffsets(ctx, cfg.Topic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		if aerr := authzError(cfg, "list end offsets", err); aerr != nil {
			return nil, aerr
		}
		return nil, fmt.Errorf("%w: list end offsets: %v", ErrUnreachable, err)
	}

	var parts []Partition
	for _, pd := range td.Partitions.Sorted() {
		p := pd.Partition
		s, _ := starts.Lookup(cfg.Topic, p)
		e, _ := ends.Lookup(cfg.Topic, p)
		part := Partition{ID: p, End: unbounded}
		if c, ok := committed[p]; ok {
			if c < s.Offset || c > e.Offset {
				return nil, fmt.Errorf("%w: %s/%d: the tables hold offset %d but the log has [%d, %d]", ErrOffsetOutOfRange, cfg.Topic, p, c, s.Offset, e.Offset)
			}
			part.Start = c
		} else if policy == Latest {
			part.Start = e.Offset
		} else {
			part.Start = s.Offset
		}
		if bounded {
			part.End = max(e.Offset, part.Start)
		}
		parts = append(parts, part)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	return parts, nil
}

// TopicID returns the Kafka topic id of cfg.Topic, in kadm's base64 form,
// or "" when the brokers do not give topic ids. A topic that is deleted and
// created again under the same name gets a new id: the tables record the
// id with their offsets so that offsets of the old topic are never taken
// for the new one's. It fails within timeout when no broker answers.
func TopicID(ctx context.Context, cfg Config, timeout time.Duration) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	adm, td, err := describe(ctx, cfg, timeout)
	if err != nil {
		return "", err
	}
	adm.Close()
	if td.ID == (kadm.TopicID{}) {
		return "", nil
	}
	return td.ID.String(), nil
}

// describe connects to the brokers and returns an admin client, which the
// caller closes, and the topic's metadata; a missing topic is ErrNoTopic.
func describe(ctx context.Context, cfg Config, timeout time.Duration) (*kadm.Client, kadm.TopicDetail, error) {
	opts, err := cfg.ClientOptions()
	if err != nil {
		return nil, kadm.TopicDetail{}, err
	}
	cl, err := newClient("admin/"+cfg.Topic, append(opts, kgo.RetryTimeout(timeout))...)
	if err != nil {
		return nil, kadm.TopicDetail{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, cfg.Topic)
	if err != nil {
		adm.Close()
		if aerr := authzError(cfg, "list topics", err); aerr != nil {
			return nil, kadm.TopicDetail{}, aerr
		}
		return nil, kadm.TopicDetail{}, fmt.Errorf("%w: %s: %v", ErrUnreachable, strings.Join(cfg.Brokers, ","), err)
	}
	td, ok := topics[cfg.Topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		adm.Close()
		return nil, td, fmt.Errorf("%w: %q on %s", ErrNoTopic, cfg.Topic, strings.Join(cfg.Brokers, ","))
	}
	if td.Err != nil {
		adm.Close()
		if aerr := authzError(cfg, "describe topic", td.Err); aerr != nil {
			return nil, td, aerr
		}
		return nil, td, fmt.Errorf("%w: topic %q: %v", ErrUnreachable, cfg.Topic, td.Err)
	}
	return adm, td, nil
}
