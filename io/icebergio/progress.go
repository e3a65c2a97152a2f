package icebergio

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/transforms/offsets"
)

// Snapshot summary keys (docs/DESIGN.md, "Exactly once").
const (
	// SummaryPipeline holds a stable pipeline id, never a job or attempt id.
	SummaryPipeline = "haade.pipeline"
	// SummaryWindowEnd holds the end of the committed window, RFC 3339, UTC.
	SummaryWindowEnd = "haade.window-end"
	// SummaryOffsets holds JSON {"topic": {"partition": nextOffset}}.
	SummaryOffsets = "haade.kafka.offsets"
	// SummaryTopicIDs holds JSON {"topic": "id"}: the Kafka topic id of each
	// topic of SummaryOffsets, so that offsets of a deleted and recreated
	// topic are never taken for the new topic's.
	SummaryTopicIDs = "haade.kafka.topic-ids"
)

// TopicIDs maps a topic name to its Kafka topic id (any stable text form).
// An empty or missing id means unknown: offsets recorded without an id
// (by older versions) are kept.
type TopicIDs map[string]string

func (t TopicIDs) encode() string {
	b, _ := json.Marshal(t)
	return string(b)
}

func decodeTopicIDs(s string) (TopicIDs, error) {
	if s == "" {
		return nil, nil
	}
	t := TopicIDs{}
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, fmt.Errorf("%w: %s=%q: %v", ErrBadSummary, SummaryTopicIDs, s, err)
	}
	return t, nil
}

// stale returns the topics of o whose recorded id (in recorded) differs
// from the current one: offsets of another topic of the same name.
func (t TopicIDs) stale(o offsets.Offsets, recorded TopicIDs) []string {
	var out []string
	for topic := range o {
		cur, was := t[topic], recorded[topic]
		if cur != "" && was != "" && cur != was {
			out = append(out, topic)
		}
	}
	sort.Strings(out)
	return out
}

func decodeOffsets(s string) (offsets.Offsets, error) {
	o, err := offsets.Decode(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q: %v", ErrBadSummary, SummaryOffsets, s, err)
	}
	return o, nil
}

// ProgressProperty is the table property where a pipeline records the
// offsets the table holds: JSON {"offsets": Offsets, "at": unix ms,
// "topic_ids": TopicIDs}. Every commit sets it in the same transaction as
// its snapshot, so the offsets survive any snapshot expiry, by any engine:
// Spark's, Trino's or pyiceberg's expire_snapshots can remove every
// snapshot that carries haade.kafka.offsets, never the property. Windows
// without rows for this table (a dead-letter table seldom gets rows) also
// advance it, at most once per progress interval, in a metadata-only commit.
func ProgressProperty(pipeline string) string { return "haade.progress." + pipeline }

type progress struct {
	Offsets  offsets.Offsets `json:"offsets"`
	At       int64           `json:"at"`
	TopicIDs TopicIDs        `json:"topic_ids,omitempty"`
}

// CommittedOffsets returns the offsets that the table holds for pipeline:
// those recorded by the newest snapshot of pipeline that has them, walking
// back from the current snapshot through its ancestors (a compaction
// snapshot carries no offsets), raised by the pipeline's progress property,
// which survives snapshot expiry. It returns an empty set for a table that
// has none.
func CommittedOffsets(tbl *table.Table, pipeline string) (offsets.Offsets, error) {
	out, _, _, err := committedOffsets(tbl, pipeline, nil)
	return out, err
}

// committedOffsets is CommittedOffsets for the topics ids, the current
// Kafka topic ids: offsets recorded for a topic under another id belong to
// a deleted topic of the same name; they are left out, and the topic is
// listed in stale. It also returns when the offsets were last made durable.
func committedOffsets(tbl *table.Table, pipeline string, ids TopicIDs) (out offsets.Offsets, at time.Time, stale []string, err error) {
	out = offsets.Offsets{}
	keep := func(o offsets.Offsets, recorded TopicIDs) {
		for _, t := range ids.stale(o, recorded) {
			if !slices.Contains(stale, t) {
				stale = append(stale, t)
			}
			delete(o, t)
		}
	}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		for _, s := range table.AncestorsOf(cur.SnapshotID, tbl.Metadata().SnapshotByID) {
			if s.Summary == nil || s.Summary.Properties[SummaryPipeline] != pipeline {
				continue
			}
			if v, ok := s.Summary.Properties[SummaryOffsets]; ok {
				o, err := decodeOffsets(v)
				if err != nil {
					return nil, at, nil, err
				}
				recorded, err := decodeTopicIDs(s.Summary.Properties[SummaryTopicIDs])
				if err != nil {
					return nil, at, nil, err
				}
				keep(o, recorded)
				out, at = o, time.UnixMilli(s.TimestampMs)
				break
			}
		}
	}
	if v, ok := tbl.Properties()[ProgressProperty(pipeline)]; ok {
		var p progress
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return nil, at, nil, fmt.Errorf("%w: %s=%q: %v", ErrBadSummary, ProgressProperty(pipeline), v, err)
		}
		if p.Offsets == nil {
			p.Offsets = offsets.Offsets{}
		}
		keep(p.Offsets, p.TopicIDs)
		out.Max(p.Offsets)
		if t := time.UnixMilli(p.At); t.After(at) {
			at = t
		}
	}
	return out, at, stale, nil
}

// windowCommitted reports whether the table's history holds the commit
// token of a window: (pipeline, window end) and the offsets the commit
// records (encoded, as in the summary), and the topic ids they belong to. The window end alone is not
// enough: a pipeline restarted within one commit interval makes a new window
// with the same end, whose rows are new and must not be skipped; and a
// recreated topic can reach the very same offsets again.
func windowCommitted(tbl *table.Table, pipeline string, windowEnd time.Time, encoded, topicIDs string) bool {
	end := windowEnd.UTC().Format(time.RFC3339Nano)
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[SummaryPipeline] == pipeline &&
			s.Summary.Properties[SummaryWindowEnd] == end && s.Summary.Properties[SummaryOffsets] == encoded &&
			s.Summary.Properties[SummaryTopicIDs] == topicIDs {
			return true
		}
	}
	return false
}
