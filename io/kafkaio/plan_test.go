package kafkaio

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/transforms/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestPartitions lists the partitions with their ranges, before Plan's
// rules: committed offsets, the policy for the others, bounded or not.
func TestPartitions(t *testing.T) {
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
	tp := open(t, cfg) // one admin client for every listing
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tp.partitions(context.Background(), tc.committed, tc.policy, tc.bounded)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
		})
	}

	errTests := []struct {
		name      string
		committed map[int32]int64
		want      error
	}{
		{"committed beyond the end", map[int32]int64{2: 5}, ErrOffsetOutOfRange},
		{"committed before the log start", map[int32]int64{1: 2}, ErrOffsetOutOfRange},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tp.partitions(context.Background(), tc.committed, Earliest, true)
			if !errors.Is(err, tc.want) {
				t.Fatalf("partitions = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestPlan plans reads through Open and Plan: the start of each partition
// from the sinks' offsets and the policy, the end offsets of a bounded
// read, and the groups spread over the runner's parallelism.
func TestPlan(t *testing.T) {
	cfg := startKafka(t, 4)
	cl := client(t, cfg)
	produce(t, cl, "v", map[int32]int{0: 10, 1: 8, 2: 6, 3: 4})
	const inf = unbounded
	other := offsets.Offsets{"other-topic": {0: 1, 1: 1, 2: 1, 3: 1}}
	tests := []struct {
		name string
		opts PlanOpts
		want []Partition
	}{
		{"the zero value: every partition from its earliest, without end", PlanOpts{},
			[]Partition{{ID: 0, Start: 0, End: inf}, {ID: 1, Start: 0, End: inf}, {ID: 2, Start: 0, End: inf}, {ID: 3, Start: 0, End: inf}}},
		{"bounded: to the end offsets of this moment", PlanOpts{Bounded: true},
			[]Partition{{ID: 0, Start: 0, End: 10}, {ID: 1, Start: 0, End: 8}, {ID: 2, Start: 0, End: 6}, {ID: 3, Start: 0, End: 4}}},
		{"a first run, latest", PlanOpts{Policy: Latest, Bounded: true},
			[]Partition{{ID: 0, Start: 10, End: 10}, {ID: 1, Start: 8, End: 8}, {ID: 2, Start: 6, End: 6}, {ID: 3, Start: 4, End: 4}}},
		{"offsets of another topic only: still a first run", PlanOpts{Committed: []offsets.Offsets{other}, Policy: Latest, Bounded: true},
			[]Partition{{ID: 0, Start: 10, End: 10}, {ID: 1, Start: 8, End: 8}, {ID: 2, Start: 6, End: 6}, {ID: 3, Start: 4, End: 4}}},
		{"committed offsets honoured", PlanOpts{Committed: []offsets.Offsets{{topic: {0: 7, 1: 8, 2: 0, 3: 4}}}, Bounded: true},
			[]Partition{{ID: 0, Start: 7, End: 10}, {ID: 1, Start: 8, End: 8}, {ID: 2, Start: 0, End: 6}, {ID: 3, Start: 4, End: 4}}},
		{"the smallest offset of the sinks", PlanOpts{Committed: []offsets.Offsets{{topic: {0: 7, 1: 2}}, {topic: {0: 5, 1: 6}}}, Bounded: true},
			[]Partition{{ID: 0, Start: 5, End: 10}, {ID: 1, Start: 2, End: 8}, {ID: 2, Start: 0, End: 6}, {ID: 3, Start: 0, End: 4}}},
		{"ran before: a new partition starts at its earliest, not latest", PlanOpts{Committed: []offsets.Offsets{{topic: {0: 7, 1: 8}}}, Policy: Latest, Bounded: true},
			[]Partition{{ID: 0, Start: 7, End: 10}, {ID: 1, Start: 8, End: 8}, {ID: 2, Start: 0, End: 6}, {ID: 3, Start: 0, End: 4}}},
		{"ran before, a partition in one sink only: from its earliest", PlanOpts{Committed: []offsets.Offsets{{topic: {0: 7}}, {}}, Policy: Latest, Bounded: true},
			[]Partition{{ID: 0, Start: 0, End: 10}, {ID: 1, Start: 0, End: 8}, {ID: 2, Start: 0, End: 6}, {ID: 3, Start: 0, End: 4}}},
	}
	tp := open(t, cfg)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := tp.Plan(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, src.Partitions); diff != "" {
				t.Errorf("Partitions (-want +got):\n%s", diff)
			}
			start, end := offsets.Offsets{}, offsets.Offsets{}
			for _, p := range tc.want {
				start.Set(topic, p.ID, p.Start)
				if tc.opts.Bounded {
					end.Set(topic, p.ID, p.End)
				}
			}
			if diff := cmp.Diff(start, src.Start); diff != "" {
				t.Errorf("Start (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(end, src.End); diff != "" {
				t.Errorf("End (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(spread(deal(tc.want, DefaultReaders), len(tc.want)), src.Groups); diff != "" {
				t.Errorf("Groups (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("groups spread over the parallelism", func(t *testing.T) {
		var asked []int
		src, err := tp.Plan(context.Background(), PlanOpts{Bounded: true, Readers: 3,
			Parallelism: func(n int) int { asked = append(asked, n); return 2 }})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{3}, asked); diff != "" {
			t.Errorf("Parallelism asked for (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(spread(deal(src.Partitions, 3), 2), src.Groups); diff != "" {
			t.Errorf("Groups (-want +got):\n%s", diff)
		}
		if len(src.Groups) != 3 || len(src.Groups[0].Parts) != 2 {
			t.Errorf("Groups = %+v, want 3 with 2, 1 and 1 partitions", src.Groups)
		}
	})

	t.Run("a partition added since Open is planned", func(t *testing.T) {
		cfg := startKafka(t, 2)
		tp := open(t, cfg)
		if _, err := kadm.NewClient(client(t, cfg)).CreatePartitions(context.Background(), 1, topic); err != nil {
			t.Fatal(err)
		}
		src, err := tp.Plan(context.Background(), PlanOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if len(src.Partitions) != 3 {
			t.Errorf("Partitions = %+v, want 3", src.Partitions)
		}
	})

	errTests := []struct {
		name string
		opts PlanOpts
		want error
	}{
		{"committed beyond the end", PlanOpts{Committed: []offsets.Offsets{{topic: {2: 7}}}}, ErrOffsetOutOfRange},
		{"bad start policy", PlanOpts{Policy: StartPolicy("middle")}, ErrConfig},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tp.Plan(context.Background(), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Plan = %+v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	cfg := startKafka(t, 2)
	tp := open(t, cfg)
	if tp.ID() == "" {
		t.Error("ID is empty; kfake gives topic ids")
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"missing topic", Config{Brokers: cfg.Brokers, Topic: "nope"}, ErrNoTopic},
		{"no brokers", Config{Topic: topic}, ErrConfig},
		{"no topic", Config{Brokers: cfg.Brokers}, ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Open(context.Background(), tc.cfg, 10*time.Second)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open = %+v, %v; want %v", got, err, tc.want)
			}
		})
	}

	t.Run("the topic deleted after Open", func(t *testing.T) {
		cfg := startKafka(t, 2)
		tp := open(t, cfg)
		if _, err := kadm.NewClient(client(t, cfg)).DeleteTopic(context.Background(), topic); err != nil {
			t.Fatal(err)
		}
		if got, err := tp.Plan(context.Background(), PlanOpts{}); !errors.Is(err, ErrNoTopic) {
			t.Fatalf("Plan = %+v, %v; want ErrNoTopic", got, err)
		}
	})
}

func TestOpenUnreachable(t *testing.T) {
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
			_, err := Open(context.Background(), Config{Brokers: []string{tc.broker}, Topic: topic}, timeout)
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Open = %v, want ErrUnreachable", err)
			}
			if took := time.Since(started); took > timeout+3*time.Second {
				t.Errorf("Open took %v to fail, want about %v", took, timeout)
			}
		})
	}
}
