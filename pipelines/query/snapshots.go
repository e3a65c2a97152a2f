package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// snapshots prints a table's snapshots, oldest first: id, parent, commit
// time, operation and summary, the haade.* keys first and marked with *.
// Then the table's haade.* properties (progress of windows without rows).
func (q *query) snapshots(ctx context.Context) error {
	tbl, err := q.load(ctx)
	if err != nil {
		return err
	}
	snaps := tbl.Metadata().Snapshots()
	sort.SliceStable(snaps, func(i, j int) bool {
		if snaps[i].SequenceNumber != snaps[j].SequenceNumber {
			return snaps[i].SequenceNumber < snaps[j].SequenceNumber
		}
		return snaps[i].TimestampMs < snaps[j].TimestampMs
	})
	var current int64
	if c := tbl.CurrentSnapshot(); c != nil {
		current = c.SnapshotID
	}
	fmt.Fprintf(q.out, "%s: %s, location %s\n", q.cfg.Table, plural(len(snaps), "snapshot"), tbl.Location())
	for _, s := range snaps {
		parent := "none"
		if s.ParentSnapshotID != nil {
			parent = fmt.Sprint(*s.ParentSnapshotID)
		}
		op := "?"
		var props map[string]string
		if s.Summary != nil {
			op, props = string(s.Summary.Operation), s.Summary.Properties
		}
		mark := ""
		if s.SnapshotID == current {
			mark = "  (current)"
		}
		fmt.Fprintf(q.out, "\nsnapshot %d  %s  %s  parent %s  seq %d%s\n", s.SnapshotID,
			time.UnixMilli(s.TimestampMs).UTC().Format("2006-01-02T15:04:05.000Z07:00"), op, parent, s.SequenceNumber, mark)
		q.summary(props)
	}
	var haade []string
	for k := range tbl.Properties() {
		if strings.HasPrefix(k, "haade.") {
			haade = append(haade, k)
		}
	}
	if len(haade) > 0 {
		sort.Strings(haade)
		fmt.Fprintf(q.out, "\ntable properties\n")
		props := map[string]string{}
		for _, k := range haade {
			props[k] = tbl.Properties()[k]
		}
		q.summary(props)
	}
	return nil
}

// summary prints key-value pairs aligned, haade.* first, marked with *
// (and highlighted on a terminal).
func (q *query) summary(props map[string]string) {
	keys := make([]string, 0, len(props))
	w := 0
	for k := range props {
		keys = append(keys, k)
		w = max(w, len(k))
	}
	sort.Slice(keys, func(i, j int) bool {
		hi, hj := strings.HasPrefix(keys[i], "haade."), strings.HasPrefix(keys[j], "haade.")
		if hi != hj {
			return hi
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		line := fmt.Sprintf("%-*s  %s", w, k, escape(props[k]))
		if strings.HasPrefix(k, "haade.") {
			if q.color {
				line = "\x1b[1;33m" + line + "\x1b[0m"
			}
			fmt.Fprintf(q.out, "  * %s\n", line)
		} else {
			fmt.Fprintf(q.out, "    %s\n", line)
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
