package obs

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// IsTerminal reports whether f is a character device (a TTY).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Progress writes a progress line to w every interval until ctx ends:
// records read per second, total lag, rows written, dead letters and the
// time since the last commit.
func Progress(ctx context.Context, w io.Writer, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var lastRead float64
	lastAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s := Snapshot()
			rate := (s.Read - lastRead) / now.Sub(lastAt).Seconds()
			lastRead, lastAt = s.Read, now
			last := "none yet"
			if s.SinceCommit >= 0 {
				last = fmt.Sprintf("%.0fs ago", s.SinceCommit)
			}
			fmt.Fprintf(w, "progress: %.0f events/s, read %.0f, lag %.0f, rows %.0f, dead letters %.0f, commits %.0f, last commit %s\n",
				rate, s.Read, s.Lag, s.Rows, s.DeadLetters, s.Commits, last)
		}
	}
}

// Totals are sums over the labels of the main metrics.
type Totals struct {
	Read, Lag, Parsed, DeadLetters, Rows, Commits float64
	// SinceCommit is the smallest "seconds since last commit" of any table,
	// or -1 when no table has committed.
	SinceCommit float64
}

// Snapshot sums the main metrics of this process.
func Snapshot() Totals {
	out := Totals{SinceCommit: -1}
	mfs, err := Registry.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		sum := 0.0
		for _, m := range mf.GetMetric() {
			sum += value(m)
		}
		switch mf.GetName() {
		case "haade_kafka_records_read_total":
			out.Read = sum
		case "haade_kafka_consumer_lag":
			out.Lag = sum
		case "haade_records_parsed_total":
			out.Parsed = sum
		case "haade_dead_letters_total":
			out.DeadLetters = sum
		case "haade_rows_written_total":
			out.Rows = sum
		case "haade_commits_total":
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" && l.GetValue() == "committed" {
						out.Commits += value(m)
					}
				}
			}
		case "haade_last_commit_timestamp_seconds":
			for _, m := range mf.GetMetric() {
				since := float64(time.Now().UnixNano())/1e9 - value(m)
				if out.SinceCommit < 0 || since < out.SinceCommit {
					out.SinceCommit = since
				}
			}
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}
