package kafkaio

import (
	"context"
	"fmt"
	"sort"

	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
)

// StartPolicy says where a partition with no committed offset begins.
type StartPolicy string

const (
	Earliest StartPolicy = "earliest"
	Latest   StartPolicy = "latest"
)

// PlanOpts says how Plan plans a read. The zero value reads every
// partition from its earliest offset, without end, in at most
// DefaultReaders groups, one subtask each.
type PlanOpts struct {
	// Committed are the offsets each sink of the pipeline holds, of every
	// topic, as the next offset to read (icebergio.Sink.Committed). A
	// partition starts at the smallest of its offsets in all sets
	// (offsets.Min); one missing from any set starts by Policy. Default
	// none: a first run.
	Committed []offsets.Offsets
	// Policy is where a partition without a committed offset begins on a
	// first run: Earliest or Latest. Once a set of Committed names the
	// topic, the pipeline ran before and such a partition is new: it
	// begins at Earliest, so that nothing in it is skipped. Default
	// Earliest.
	Policy StartPolicy
	// Bounded ends each partition at its end offset of this moment (for a
	// read_committed Config, its last stable offset). Default false: no
	// end.
	Bounded bool
	// Readers is the most groups the partitions are dealt into, each one
	// element of the read with one client (see Group). Default
	// DefaultReaders.
	Readers int
	// Parallelism returns the number of subtasks that read n groups (on
	// Flink: the job's parallelism); the groups are spread evenly over
	// them (see Group.Spread). Default nil: n, one subtask per group.
	Parallelism func(n int) int
}

// Source is a planned read of a topic, what Read wires.
type Source struct {
	// Partitions are the topic's partitions in ID order, each with the
	// range it reads; End is math.MaxInt64 when the read is unbounded.
	Partitions []Partition
	// Groups are the partitions dealt into readers, in ID order, spread
	// over the runner's subtasks.
	Groups []Group
	// Start holds each partition's first offset to read, and End each
	// partition's end when the read is bounded (empty otherwise), keyed
	// by the topic: what a sink starts from, and what a bounded run must
	// have committed at its end.
	Start, End offsets.Offsets

	cfg Config // validated by Open
}

// Plan lists the topic's partitions with the range each one reads: from
// its committed offset when o.Committed has one, else from the start
// policy's offset; up to the end offsets of this moment when bounded, else
// without end. It deals them into groups and spreads the groups over the
// runner's subtasks. A committed offset outside the log is
// ErrOffsetOutOfRange, never a silent reset. It fails within the Topic's
// timeout when no broker answers.
func (t *Topic) Plan(ctx context.Context, o PlanOpts) (*Source, error) {
	topic := t.cfg.Topic
	policy := o.Policy
	if policy == "" {
		policy = Earliest
	}
	if policy != Earliest && policy != Latest {
		return nil, fmt.Errorf("%w: start %q: want earliest or latest", ErrConfig, policy)
	}
	for _, c := range o.Committed {
		if len(c[topic]) > 0 {
			// The pipeline ran before: a partition missing from the
			// offsets is new, and is read from its earliest offset so
			// nothing in it is skipped.
			policy = Earliest
		}
	}
	parts, err := t.partitions(ctx, offsets.Min(o.Committed...)[topic], policy, o.Bounded)
	if err != nil {
		return nil, err
	}
	src := &Source{Partitions: parts, Start: offsets.Offsets{}, End: offsets.Offsets{}, cfg: t.cfg}
	for _, p := range parts {
		src.Start.Set(topic, p.ID, p.Start)
		if p.End != unbounded {
			src.End.Set(topic, p.ID, p.End)
		}
	}
	src.Groups = deal(parts, o.Readers)
	parallelism := len(src.Groups)
	if o.Parallelism != nil {
		parallelism = o.Parallelism(len(src.Groups))
	}
	src.Groups = spread(src.Groups, parallelism)
	return src, nil
}

// partitions lists the topic's partitions with the range each one reads:
// from committed[partition] when there is one, else from the policy's
// offset; up to the end offsets of this moment when bounded.
func (t *Topic) partitions(ctx context.Context, committed map[int32]int64, policy StartPolicy, bounded bool) ([]Partition, error) {
	cfg := t.cfg
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	// Described again, past the client's metadata cache (MetadataMinAge):
	// partitions added since Open are planned too, and a topic deleted
	// since is ErrNoTopic.
	t.cl.PurgeTopicsFromClient(cfg.Topic)
	td, err := t.describe(ctx)
	if err != nil {
		return nil, err
	}
	starts, err := t.adm.ListStartOffsets(ctx, cfg.Topic)
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
		ends, err = t.adm.ListEndOffsets(ctx, cfg.Topic)
	} else {
		ends, err = t.adm.ListCommittedOffsets(ctx, cfg.Topic)
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
