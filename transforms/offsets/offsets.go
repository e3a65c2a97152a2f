package offsets

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Range is a half-open range [Start, End) of offsets of one source
// partition. Batches carry the range they cover, gaps included, so that the
// ranges of one partition tile its offsets with no hole.
type Range struct {
	Topic     string
	Partition int32
	Start     int64
	End       int64
}

func (r Range) String() string {
	return fmt.Sprintf("%s/%d[%d,%d)", r.Topic, r.Partition, r.Start, r.End)
}

// AppendRange adds r to rs, merged into a range of rs that it continues
// (one of the same partition that ends where r starts), else appended: the
// ranges of a window's batches, kept short.
func AppendRange(rs []Range, r Range) []Range {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Topic == r.Topic && rs[i].Partition == r.Partition && rs[i].End == r.Start {
			rs[i].End = r.End
			return rs
		}
	}
	return append(rs, r)
}

// Offsets maps topic -> partition -> the next offset to read. Its JSON
// form (Encode, Decode) is {"topic": {"partition": next}}, the value of
// the snapshot summary key haade.kafka.offsets.
type Offsets map[string]map[int32]int64

// Next returns the next offset of a partition, and whether it is known.
func (o Offsets) Next(topic string, partition int32) (int64, bool) {
	v, ok := o[topic][partition]
	return v, ok
}

// Set records the next offset of a partition.
func (o Offsets) Set(topic string, partition int32, next int64) {
	if o[topic] == nil {
		o[topic] = map[int32]int64{}
	}
	o[topic][partition] = next
}

// Clone returns a deep copy.
func (o Offsets) Clone() Offsets {
	c := Offsets{}
	for t, ps := range o {
		for p, v := range ps {
			c.Set(t, p, v)
		}
	}
	return c
}

// Max raises every partition of o to at least its offset in other.
func (o Offsets) Max(other Offsets) {
	for t, ps := range other {
		for p, v := range ps {
			if cur, ok := o.Next(t, p); !ok || v > cur {
				o.Set(t, p, v)
			}
		}
	}
}

// Advance raises each partition that rs covers to at least the end of its
// ranges there: the offsets once the ranges are read. It never moves a
// partition back.
func (o Offsets) Advance(rs ...Range) {
	for _, r := range rs {
		if cur, ok := o.Next(r.Topic, r.Partition); !ok || r.End > cur {
			o.Set(r.Topic, r.Partition, r.End)
		}
	}
}

// Ahead reports whether o holds a partition beyond other (or one that
// other does not know).
func (o Offsets) Ahead(other Offsets) bool {
	for t, ps := range o {
		for p, v := range ps {
			if w, ok := other.Next(t, p); !ok || v > w {
				return true
			}
		}
	}
	return false
}

// Behind returns, in a stable order, the ranges from o's offset up to
// want's for every partition where o holds less than want (a partition
// missing from o holds nothing: its range starts at from's offset, or at
// want's when from does not know it). A bounded run checks with it that its
// tables hold every offset it read, from the offsets it started at.
func (o Offsets) Behind(from, want Offsets) []Range {
	var out []Range
	for t, ps := range want {
		for p, end := range ps {
			held, ok := o.Next(t, p)
			if !ok {
				if held, ok = from.Next(t, p); !ok {
					held = end
				}
			}
			if held < end {
				out = append(out, Range{Topic: t, Partition: p, Start: held, End: end})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Min returns, for each partition present in every one of sets, the
// smallest next offset. A partition missing from any set is missing from
// the result, so that a reader starts it at its earliest offset.
func Min(sets ...Offsets) Offsets {
	out := Offsets{}
	if len(sets) == 0 {
		return out
	}
	for t, ps := range sets[0] {
	next:
		for p, v := range ps {
			for _, s := range sets[1:] {
				w, ok := s.Next(t, p)
				if !ok {
					continue next
				}
				if w < v {
					v = w
				}
			}
			out.Set(t, p, v)
		}
	}
	return out
}

// Encode returns the JSON form, {"topic": {"partition": next}}.
func (o Offsets) Encode() string {
	b, _ := json.Marshal(o) // map[int32] keys marshal as strings
	return string(b)
}

// Decode parses the JSON form that Encode returns.
func Decode(s string) (Offsets, error) {
	o := Offsets{}
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return nil, err
	}
	return o, nil
}

// String lists the offsets in a stable order, for logs.
func (o Offsets) String() string {
	var ts []string
	for t := range o {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	var s strings.Builder
	for _, t := range ts {
		var ps []int
		for p := range o[t] {
			ps = append(ps, int(p))
		}
		sort.Ints(ps)
		for _, p := range ps {
			fmt.Fprintf(&s, "%s/%d=%d ", t, p, o[t][int32(p)])
		}
	}
	return s.String()
}
