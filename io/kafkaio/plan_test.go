package kafkaio

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
)

func TestPlan(t *testing.T) {
	cfg := startKafka(t, 3)
	cl := client(t, cfg)
	produce(t, cl, "v", map[int32]int{0: 10, 1: 10, 2: 4})
	// Retention removed the first 3 records of partition 1.
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: topic, Partition: 1, At: 3})
	if _, err := kadm.NewClient(cl).DeleteRecords(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	const inf = unbounded
	tests := []struct {
		name      string
		committed map[int32]int64
		policy    StartPolicy
		bounded   bool
		want      []Partition
	}{
		{"earliest, bounded", nil, Earliest, true, []Partition{{ID: 0, Start: 0, End: 10}, {ID: 1, Start: 3, End: 10}, {ID: 2, Start: 0, End: 4}}},
		{"earliest, unbounded", nil, Earliest, false, []Partition{{ID: 0, Start: 0, End: inf}, {ID: 1, Start: 3, End: inf}, {ID: 2, Start: 0, End: inf}}},
		{"latest, bounded", nil, Latest, true, []Partition{{ID: 0, Start: 10, End: 10}, {ID: 1, Start: 10, End: 10}, {ID: 2, Start: 4, End: 4}}},
		{"latest, unbounded", nil, Latest, false, []Partition{{ID: 0, Start: 10, End: inf}, {ID: 1, Start: 10, End: inf}, {ID: 2, Start: 4, End: inf}}},
		{"committed offsets, the rest earliest", map[int32]int64{0: 7, 2: 4}, Earliest, true, []Partition{{ID: 0, Start: 7, End: 10}, {ID: 1, Start: 3, End: 10}, {ID: 2, Start: 4, End: 4}}},
		{"committed offsets, the rest latest", map[int32]int64{0: 7, 1: 3}, Latest, false, []Partition{{ID: 0, Start: 7, End: inf}, {ID: 1, Start: 3, End: inf}, {ID: 2, Start: 4, End: inf}}},
		{"committed at both ends of the log", map[int32]int64{0: 0, 1: 10}, Earliest, true, []Partition{{ID: 0, Start: 0, End: 10}, {ID: 1, Start: 10, End: 10}, {ID: 2, Start: 0, End: 4}}},
		{"committed offsets of unknown partitions are ignored", map[int32]int64{9: 100}, Earliest, true, []Partition{{ID: 0, Start: 0, End: 10}, {ID: 1, Start: 3, End: 10}, {ID: 2, Start: 0, End: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Plan(context.Background(), cfg, tc.committed, tc.policy, tc.bounded, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}

	errTests := []struct {
		name      string
		cfg       Config
		committed map[int32]int64
		policy    StartPolicy
		want      error
	}{
		{"committed beyond the end", cfg, map[int32]int64{2: 5}, Earliest, ErrOffsetOutOfRange},
		{"committed before the log start", cfg, map[int32]int64{1: 2}, Earliest, ErrOffsetOutOfRange},
		{"missing topic", Config{Brokers: cfg.Brokers, Topic: "nope"}, nil, Earliest, ErrNoTopic},
		{"bad start policy", cfg, nil, StartPolicy("middle"), ErrConfig},
		{"no brokers", Config{Topic: topic}, nil, Earliest, ErrConfig},
		{"no topic", Config{Brokers: cfg.Brokers}, nil, Earliest, ErrConfig},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Plan(context.Background(), tc.cfg, tc.committed, tc.policy, true, 10*time.Second)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Plan = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestPlanUnreachable(t *testing.T) {
	// A listener that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	tests := []struct{ name, broker string }{
		{"connection refused", "127.0.0.1:1"},
		{"broker never answers", silent.Addr().String()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const timeout = 2 * time.Second
			started := time.Now()
			_, err := Plan(context.Background(), Config{Brokers: []string{tc.broker}, Topic: topic}, nil, Earliest, true, timeout)
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Plan = %v, want ErrUnreachable", err)
			}
			if took := time.Since(started); took > timeout+3*time.Second {
				t.Errorf("Plan took %v to fail, want about %v", took, timeout)
			}
		})
	}
}
