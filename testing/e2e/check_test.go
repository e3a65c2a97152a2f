//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/sparkpy"
	"github.com/haade/haade/testing/wait"
	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse/event"
	"github.com/haade/haade/transforms/tables"
)

var (
	sources = []string{"news", "Reuters", " bloomberg ", "FT", "sec-filings", "central-bank", "rating-agency"}
	titles  = []string{"Debt market update", "Sovereign bond downgrade", "Corporate credit issuance", "High-yield refinancing", "Treasury yield spike"}
	baseTS  = time.Date(2026, 5, 19, 10, 0, 0, 0, time.UTC)
)

// validEvent returns the i-th valid event: distinct for every i, with a mix of
// extra members, nulls, missing members, escapes and zone offsets.
func validEvent(i int) []byte {
	ts := baseTS.Add(time.Duration(i) * 37 * time.Millisecond)
	src := sources[i%len(sources)]
	title := fmt.Sprintf("%s #%d", titles[(i/7)%len(titles)], i)
	switch i % 10 {
	case 0:
		return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q, "amount_musd": %d, "currency": "USD", "meta": {"desk": "rates", "urgent": %v, "n": null}, "tags": ["debt", "eu"]}`,
			src, title, ts.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano), i%5000, i%3 == 0)
	case 1:
		return fmt.Appendf(nil, `{"source": %q, "title": null, "timestamp": %q}`, src, ts.Format(time.RFC3339))
	case 2:
		return fmt.Appendf(nil, `{"title": %q, "timestamp": %q}`, title, ts.Format(time.RFC3339Nano))
	case 3:
		return fmt.Appendf(nil, `{"timestamp":"%s","source":"%s","title":"Caf\u00e9 \"quoted\" \\ \ud83d\udcb0 %d"}`, ts.Format(time.RFC3339Nano), src, i)
	case 4:
		return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q, "rating": "BBB-"}`,
			src, title, ts.In(time.FixedZone("", -(5*3600+1800))).Format("2006-01-02T15:04:05.000000-07:00"))
	default:
		return fmt.Appendf(nil, `{"source": %q, "title": %q, "timestamp": %q}`, src, title, ts.Format(time.RFC3339))
	}
}

// streamEvent is what the streaming tests produce: mostly events, and every
// 250th value one of the malformed corpus.
func streamEvent(i int) []byte {
	if i%250 == 249 {
		return event.MalformedCorpus[(i/250)%len(event.MalformedCorpus)]
	}
	return validEvent(i)
}

// reasons maps each malformed value to the reason class its dead letter
// must name.
var reasons = func() map[string]string {
	m := map[string]string{}
	for _, c := range event.MalformedCases {
		m[string(c.Value)] = c.Reason
	}
	return m
}()

// expectedRow is what a Kafka record must become, decided and decoded
// independently of the parser (encoding/json and time.Parse). ingested_at
// is not known in advance and is left out. dlq says which table.
func expectedRow(t testing.TB, topic string, k krec) (row map[string]any, dlq bool) {
	t.Helper()
	ts := any(k.TsMs * 1000)
	// A topic's timestamps are CreateTime unless kcat said otherwise
	// (env.timestampTypes).
	tsType := k.TsType
	if tsType == "" {
		tsType = "CreateTime"
	}
	common := map[string]any{"kafka_topic": topic, "kafka_partition": int64(k.P), "kafka_offset": k.O, "kafka_timestamp": ts,
		"kafka_key": b64(k.K), "kafka_headers": nil, "kafka_timestamp_type": tsType}
	if k.H != nil {
		var hs []any
		for _, h := range k.H {
			hs = append(hs, map[string]any{"key": h[0], "value": b64([]byte(h[1]))})
		}
		common["kafka_headers"] = hs
	}
	if _, bad := reasons[string(k.V)]; bad || k.V == nil {
		common["payload"] = nil
		if k.V != nil {
			common["payload"] = base64.StdEncoding.EncodeToString(k.V)
		}
		return common, true
	}
	var m map[string]any
	if err := json.Unmarshal(k.V, &m); err != nil {
		t.Fatalf("produced value %q is not JSON: %v", k.V, err)
	}
	str := func(name string) any {
		if s, ok := m[name].(string); ok {
			return s
		}
		return nil
	}
	common["source"], common["title"] = str("source"), str("title")
	tv, err := time.Parse(time.RFC3339Nano, m["timestamp"].(string))
	if err != nil {
		t.Fatal(err)
	}
	common["timestamp"] = tv.UnixMicro()
	delete(m, "source")
	delete(m, "title")
	delete(m, "timestamp")
	common["extra"] = nil
	if len(m) > 0 {
		common["extra"] = m // compared as decoded JSON: member order need not be kept
	}
	return common, false
}

func strPtr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// b64 is how the Python readers print a binary value: base64, or nil.
func b64(v []byte) any {
	if v == nil {
		return nil
	}
	return base64.StdEncoding.EncodeToString(v)
}

// kafkaColumns are a row's kafka_key, kafka_headers and
// kafka_timestamp_type as the Python readers print them.
func kafkaColumns(m map[string]any, key []byte, headers []offsets.Header, tsType *string) map[string]any {
	m["kafka_key"], m["kafka_headers"], m["kafka_timestamp_type"] = b64(key), nil, strPtr(tsType)
	if headers != nil {
		hs := []any{}
		for _, h := range headers {
			hs = append(hs, map[string]any{"key": h.Key, "value": b64(h.Value)})
		}
		m["kafka_headers"] = hs
	}
	return m
}

func i64Ptr(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// eventRow and dlqRow turn our own reader's rows into the JSON form the
// Python readers print.
func eventRow(ev tables.BronzeEvent) map[string]any {
	return kafkaColumns(map[string]any{"source": strPtr(ev.Source), "title": strPtr(ev.Title), "timestamp": ev.Timestamp,
		"ingested_at": ev.IngestedAt, "kafka_topic": ev.KafkaTopic, "kafka_partition": int64(ev.KafkaPartition),
		"kafka_offset": ev.KafkaOffset, "kafka_timestamp": i64Ptr(ev.KafkaTimestamp), "extra": strPtr(ev.Extra)},
		ev.KafkaKey, ev.KafkaHeaders, ev.KafkaTimestampType)
}

func dlqRow(d tables.DeadLetter) map[string]any {
	var payload any
	if d.Payload != nil {
		payload = base64.StdEncoding.EncodeToString(d.Payload)
	}
	return kafkaColumns(map[string]any{"payload": payload, "error": d.Error, "kafka_topic": d.KafkaTopic,
		"kafka_partition": int64(d.KafkaPartition), "kafka_offset": d.KafkaOffset,
		"kafka_timestamp": i64Ptr(d.KafkaTimestamp), "ingested_at": d.IngestedAt},
		d.KafkaKey, d.KafkaHeaders, d.KafkaTimestampType)
}

type key struct {
	P int32
	O int64
}

func rowKey(r map[string]any) key {
	return key{int32(r["kafka_partition"].(int64)), r["kafka_offset"].(int64)}
}

// matchExpected compares a row read back with what its Kafka record must
// become; ingested_at must lie between the record's Kafka timestamp (less a
// second of clock slack) and now.
func matchExpected(t testing.TB, who string, got, want map[string]any, dlq bool) {
	t.Helper()
	g := map[string]any{}
	for k, v := range got {
		g[k] = v
	}
	k := rowKey(got)
	ing, _ := g["ingested_at"].(int64)
	if kt, ok := want["kafka_timestamp"].(int64); !ok || ing < kt-1_000_000 || ing > time.Now().UnixMicro() {
		t.Errorf("%s: row %v: ingested_at %d is not after kafka_timestamp %v", who, k, ing, want["kafka_timestamp"])
	}
	delete(g, "ingested_at")
	if dlq {
		errText, _ := g["error"].(string)
		delete(g, "error")
		reason := "tombstone"
		if want["payload"] != nil {
			p, _ := base64.StdEncoding.DecodeString(want["payload"].(string))
			reason = reasons[string(p)]
		}
		if !strings.HasPrefix(errText, reason+":") {
			t.Errorf("%s: dead letter %v: error %q, want the reason %q", who, k, errText, reason)
		}
	} else if s, ok := g["extra"].(string); ok {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Errorf("%s: row %v: extra %q is not JSON: %v", who, k, s, err)
		}
		g["extra"] = m
	}
	if reflect.DeepEqual(want, g) {
		return
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("%s: row %v (-want +got):\n%s", who, k, diff)
	}
}

// contents is the end state of the two tables as our own reader sees it.
type contents struct {
	events []tables.BronzeEvent
	dlq    []tables.DeadLetter
}

func (e *env) scan(bronze, dlq string) contents {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var tb contents
	if err := icebergio.ScanRows(ctx, e.catalog(), bronze, &tb.events); err != nil {
		e.t.Fatalf("ScanRows %s: %v", bronze, err)
	}
	if err := icebergio.ScanRows(ctx, e.catalog(), dlq, &tb.dlq); err != nil {
		e.t.Fatalf("ScanRows %s: %v", dlq, err)
	}
	return tb
}

// counts returns the rows of both tables from their current snapshots'
// summaries: cheap enough to poll.
func (e *env) counts(ctx context.Context) (int64, error) {
	cat, err := e.cat(e).Open(ctx)
	if err != nil {
		return 0, err
	}
	defer closeCatalog(cat)
	var n int64
	for _, ident := range []string{e.table, e.dlq} {
		st, err := icebergio.Stat(ctx, cat, ident, e.pipe)
		if err != nil {
			return 0, err
		}
		n += st.Rows
	}
	return n, nil
}

// waitRows waits until the tables hold at least want rows in all, while
// the streaming pipeline p keeps running.
func (e *env) waitRows(p *proc, want int, timeout time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var have int64
	err := wait.Every(ctx, time.Second, func() error {
		if !p.running() {
			e.t.Fatalf("%s exited while catching up (%d of %d rows): %v\n%s", p.name, have, want, p.err, cmdtest.TailFile(p.log, 40))
		}
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var err error
		if have, err = e.counts(cctx); err != nil {
			return err
		}
		if have < int64(want) {
			return fmt.Errorf("%d rows", have)
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("after %v the tables hold %d rows, want %d (%v)\n%s", timeout, have, want, err, cmdtest.TailFile(p.log, 40))
	}
	e.t.Logf("tables hold %d rows (want %d) after %v", have, want, time.Since(start).Round(100*time.Millisecond))
	return time.Since(start)
}

// verifyOpts tunes verify.
type verifyOpts struct {
	bronze, dlq string // tables to read; default the env's
	// foreign accepts a bronze row that did not come from the topic (written by Spark).
	foreign func(map[string]any) bool
	// sample is about how many bronze rows each engine returns in full.
	sample int
	// snapshots also reads and checks the snapshot history.
	snapshots bool
}

// checkRow checks one row, read from ident, against the record of the
// topic it came from (byKey): it must be the only row of that record so far
// (seen, which it updates), on the right side, with the right content.
func checkRow(t testing.TB, topic, ident string, isDLQ bool, r map[string]any, byKey map[key]krec, seen map[key]string) {
	t.Helper()
	k := rowKey(r)
	if prev, dup := seen[k]; dup {
		t.Fatalf("record %d/%d is in %s and again in %s", k.P, k.O, prev, ident)
	}
	seen[k] = ident
	rec, ok := byKey[k]
	if !ok {
		t.Fatalf("%s holds a row for %d/%d, which the topic does not have", ident, k.P, k.O)
	}
	want, dlq := expectedRow(t, topic, rec)
	if dlq != isDLQ {
		t.Errorf("record %d/%d %q went to %s", k.P, k.O, rec.V, ident)
		return
	}
	matchExpected(t, "ScanRows "+ident, r, want, dlq)
}

// verify is the exactly-once check. Every record of the topic (truth, read
// back with kcat) must be in exactly one of the two tables, the right one,
// with the right content; no other row may be there. It checks this on all
// rows read with icebergio.ScanRows, then has Spark and pyiceberg count
// the rows, the distinct (partition, offset) pairs and each partition's
// offsets, and return a sample of rows in full, which must match too.
func (e *env) verify(truth []krec, o verifyOpts) map[string]*engineOut {
	t := e.t
	t.Helper()
	if o.bronze == "" {
		o.bronze, o.dlq = e.table, e.dlq
	}
	if o.sample == 0 {
		o.sample = 500
	}
	start := time.Now()
	tb := e.scan(o.bronze, o.dlq)
	ours := map[string][]map[string]any{o.bronze: nil, o.dlq: nil}
	for _, ev := range tb.events {
		ours[o.bronze] = append(ours[o.bronze], eventRow(ev))
	}
	for _, d := range tb.dlq {
		ours[o.dlq] = append(ours[o.dlq], dlqRow(d))
	}

	// 1. Every row against the truth, as icebergio.ScanRows reads them.
	byKey := map[key]krec{}
	for _, k := range truth {
		byKey[key{k.P, k.O}] = k
	}
	seen := map[key]string{}
	foreign := 0
	wantSide := map[string]int{}
	for _, ident := range []string{o.bronze, o.dlq} {
		isDLQ := ident == o.dlq
		for _, r := range ours[ident] {
			if r["kafka_topic"] != e.topic {
				if !isDLQ && o.foreign != nil && o.foreign(r) {
					foreign++
					continue
				}
				t.Fatalf("%s: row from topic %v, not %s: %v", ident, r["kafka_topic"], e.topic, r)
			}
			checkRow(t, e.topic, ident, isDLQ, r, byKey, seen)
		}
	}
	var missing []string
	for _, k := range truth {
		_, dlq := expectedRow(t, e.topic, k)
		if dlq {
			wantSide[o.dlq]++
		} else {
			wantSide[o.bronze]++
		}
		if _, ok := seen[key{k.P, k.O}]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k.P, k.O))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d records are in neither table (first: %v)", len(missing), len(truth), missing[:min(5, len(missing))])
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("ScanRows: %s %d rows, %s %d rows, every one of the %d records exactly once (%v)",
		o.bronze, len(tb.events), o.dlq, len(tb.dlq), len(truth), time.Since(start).Round(100*time.Millisecond))

	// 2. The same end state through Spark and pyiceberg.
	keys := map[string][][2]int64{}
	every := max(1, wantSide[o.bronze]/o.sample)
	n := 0
	for _, r := range ours[o.bronze] {
		if r["kafka_topic"] != e.topic {
			keys[o.bronze] = append(keys[o.bronze], [2]int64{r["kafka_partition"].(int64), r["kafka_offset"].(int64)})
			continue
		}
		if n%every == 0 {
			keys[o.bronze] = append(keys[o.bronze], [2]int64{r["kafka_partition"].(int64), r["kafka_offset"].(int64)})
		}
		n++
	}
	for _, r := range ours[o.dlq] {
		keys[o.dlq] = append(keys[o.dlq], [2]int64{r["kafka_partition"].(int64), r["kafka_offset"].(int64)})
	}
	kb, _ := json.Marshal(keys)
	args := []string{"--table", o.bronze, "--table", o.dlq, "--keys", e.writeFile("keys.json", kb), "--union", o.bronze + "," + o.dlq}
	if o.snapshots {
		args = append(args, "--snapshots")
	}
	res := e.readEngines(args...)
	e.checkEngines(res, ours, keys, o, byKey, len(truth)+foreign)
	return res
}

// checkEngines compares what Spark and pyiceberg read with our rows.
func (e *env) checkEngines(res map[string]*engineOut, ours map[string][]map[string]any, keys map[string][][2]int64, o verifyOpts, byKey map[key]krec, total int) {
	t := e.t
	t.Helper()
	for _, engine := range []string{"spark", "pyiceberg"} {
		out := res[engine]
		if out == nil {
			t.Fatalf("%s returned nothing", engine)
		}
		if out.UnionDistinct == nil || *out.UnionDistinct != int64(total) {
			t.Errorf("%s: count(DISTINCT partition, offset) over both tables = %v, want %d", engine, out.UnionDistinct, total)
		}
		for _, ident := range []string{o.bronze, o.dlq} {
			got := out.Tables[ident]
			rows := ours[ident]
			if got == nil {
				t.Fatalf("%s did not read %s", engine, ident)
			}
			if got.Count != int64(len(rows)) || got.DistinctKeys != got.Count {
				t.Errorf("%s: %s count(*) = %d, count(DISTINCT kafka_partition, kafka_offset) = %d; want both %d",
					engine, ident, got.Count, got.DistinctKeys, len(rows))
			}
			if diff := cmp.Diff(partStats(rows), sortStats(got.Partitions)); diff != "" {
				t.Errorf("%s: %s per-partition counts and offsets (-ScanRows +%s):\n%s", engine, ident, engine, diff)
			}
			idx := map[key]map[string]any{}
			for _, r := range rows {
				idx[rowKey(r)] = r
			}
			if len(got.Rows) != len(keys[ident]) {
				t.Errorf("%s: %s returned %d sample rows, want %d", engine, ident, len(got.Rows), len(keys[ident]))
			}
			isDLQ := ident == o.dlq
			for _, gr := range got.Rows {
				r := normalise(gr)
				k := rowKey(r)
				if reflect.DeepEqual(idx[k], r) {
					// equal
				} else if diff := cmp.Diff(idx[k], r); diff != "" {
					t.Errorf("%s: %s row %v (-ScanRows +%s):\n%s", engine, ident, k, engine, diff)
				}
				if rec, ok := byKey[k]; ok && r["kafka_topic"] == e.topic {
					want, _ := expectedRow(t, e.topic, rec)
					matchExpected(t, engine+" "+ident, r, want, isDLQ)
				}
			}
			if o.snapshots && len(got.Snapshots) == 0 {
				t.Errorf("%s: %s has no snapshots", engine, ident)
			}
		}
		t.Logf("%s: %s %d rows, %s %d rows, union distinct %v, %d+%d sample rows match (%.1fs)", engine,
			o.bronze, out.Tables[o.bronze].Count, o.dlq, out.Tables[o.dlq].Count, *out.UnionDistinct,
			len(out.Tables[o.bronze].Rows), len(out.Tables[o.dlq].Rows), out.Seconds)
	}
	if o.snapshots {
		for _, ident := range []string{o.bronze, o.dlq} {
			for _, engine := range []string{"spark", "pyiceberg"} {
				res[engine].Tables[ident].Snapshots = lineage(t, res[engine].Tables[ident].Snapshots)
			}
			if diff := cmp.Diff(res["spark"].Tables[ident].Snapshots, res["pyiceberg"].Tables[ident].Snapshots); diff != "" {
				t.Errorf("%s: snapshot history (-spark +pyiceberg):\n%s", ident, diff)
			}
		}
	}
}

type partStat struct {
	Topic     string `json:"topic"`
	Partition int64  `json:"partition"`
	Count     int64  `json:"count"`
	Distinct  int64  `json:"distinct"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
}

func partStats(rows []map[string]any) []partStat {
	m := map[[2]any]*partStat{}
	seen := map[key]bool{}
	for _, r := range rows {
		k := [2]any{r["kafka_topic"], r["kafka_partition"]}
		s := m[k]
		o := r["kafka_offset"].(int64)
		if s == nil {
			s = &partStat{Topic: r["kafka_topic"].(string), Partition: r["kafka_partition"].(int64), Min: o, Max: o}
			m[k] = s
		}
		s.Count++
		if rk := rowKey(r); !seen[rk] {
			seen[rk] = true
			s.Distinct++
		}
		s.Min, s.Max = min(s.Min, o), max(s.Max, o)
	}
	var out []partStat
	for _, s := range m {
		out = append(out, *s)
	}
	return sortStats(out)
}

func sortStats(s []partStat) []partStat {
	s = append([]partStat(nil), s...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].Topic != s[j].Topic {
			return s[i].Topic < s[j].Topic
		}
		return s[i].Partition < s[j].Partition
	})
	return s
}

// normalise turns JSON numbers into int64, as our rows hold them.
func normalise(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				out[k] = n.String()
				continue
			}
			out[k] = i
			continue
		}
		out[k] = v
	}
	return out
}

type snapshot struct {
	CommittedAt int64             `json:"committed_at"`
	SnapshotID  int64             `json:"snapshot_id"`
	ParentID    *int64            `json:"parent_id"`
	Operation   string            `json:"operation"`
	Summary     map[string]string `json:"summary"`
}

type tableOut struct {
	Count        int64            `json:"count"`
	DistinctKeys int64            `json:"distinct_keys"`
	Partitions   []partStat       `json:"partitions"`
	Rows         []map[string]any `json:"rows"`
	Snapshots    []snapshot       `json:"snapshots"`
}

type engineOut struct {
	SQL []struct {
		Statement string      `json:"statement"`
		Rows      [][]*string `json:"rows"`
	} `json:"sql"`
	Tables        map[string]*tableOut `json:"tables"`
	UnionDistinct *int64               `json:"union_distinct"`
	Seconds       float64              `json:"seconds"`
}

// readEngines runs py/read_tables.py with Spark and pyiceberg.
func (e *env) readEngines(args ...string) map[string]*engineOut {
	e.t.Helper()
	b := sparkpy.Run(e.t, e.dir, "testing/e2e/py/read_tables.py", append([]string{"--engines", "spark,pyiceberg"}, args...)...)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	res := map[string]*engineOut{}
	if err := dec.Decode(&res); err != nil {
		e.t.Fatalf("read_tables.py output: %v", err)
	}
	return res
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// offsetsOf decodes a haade.kafka.offsets summary value for topic.
func offsetsOf(t testing.TB, s, topic string) map[int32]int64 {
	t.Helper()
	var m map[string]map[string]int64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("haade.kafka.offsets %q: %v", s, err)
	}
	out := map[int32]int64{}
	for p, o := range m[topic] {
		var pi int32
		if _, err := fmt.Sscan(p, &pi); err != nil {
			t.Fatalf("haade.kafka.offsets %q: partition %q", s, p)
		}
		out[pi] = o
	}
	return out
}

// lineage orders snapshots from the first to the current one by their
// parent links (commit times can tie), and fails on a history that is not
// one line.
func lineage(t testing.TB, snaps []snapshot) []snapshot {
	t.Helper()
	child := map[int64]snapshot{}
	var root []snapshot
	ids := map[int64]bool{}
	for _, s := range snaps {
		ids[s.SnapshotID] = true
	}
	for _, s := range snaps {
		if s.ParentID == nil || !ids[*s.ParentID] {
			root = append(root, s)
			continue
		}
		if _, dup := child[*s.ParentID]; dup {
			t.Fatalf("snapshot %d has two children: the history is not one line", *s.ParentID)
		}
		child[*s.ParentID] = s
	}
	if len(snaps) == 0 {
		return nil
	}
	if len(root) != 1 {
		t.Fatalf("%d snapshots without a parent in the history", len(root))
	}
	out := []snapshot{root[0]}
	for {
		c, ok := child[out[len(out)-1].SnapshotID]
		if !ok {
			break
		}
		out = append(out, c)
	}
	if len(out) != len(snaps) {
		t.Fatalf("the parent links reach %d of %d snapshots", len(out), len(snaps))
	}
	return out
}

// checkSnapshots checks the snapshot history (in lineage order): each
// snapshot of our pipeline names it, its window end, and offsets that never
// go back; the offsets of the newest snapshots cover every row of their
// table, and reach Kafka's end offsets.
func (e *env) checkSnapshots(out *engineOut, bronze, dlq string, ends map[int32]int64) {
	t := e.t
	t.Helper()
	last := map[string]map[int32]int64{}
	for _, ident := range []string{bronze, dlq} {
		var prevEnd time.Time
		var prev map[int32]int64
		ours := 0
		for _, s := range out.Tables[ident].Snapshots {
			if s.Summary["haade.pipeline"] != e.pipe {
				continue
			}
			ours++
			we, err := time.Parse(time.RFC3339Nano, s.Summary["haade.window-end"])
			if err != nil {
				t.Errorf("%s snapshot %d: haade.window-end %q: %v", ident, s.SnapshotID, s.Summary["haade.window-end"], err)
			}
			if !we.After(prevEnd) {
				// Allowed: a window that covers other partitions than a late
				// earlier one may commit first. Offsets must still never go back.
				t.Logf("%s snapshot %d: window end %v committed after %v", ident, s.SnapshotID, we, prevEnd)
			}
			prevEnd = we
			offs := offsetsOf(t, s.Summary["haade.kafka.offsets"], e.topic)
			for p, o := range prev {
				if offs[p] < o {
					t.Errorf("%s snapshot %d: offsets went back on partition %d: %d after %d", ident, s.SnapshotID, p, offs[p], o)
				}
			}
			if s.Operation != "append" {
				t.Errorf("%s snapshot %d: operation %q, want append", ident, s.SnapshotID, s.Operation)
			}
			prev = offs
		}
		if ours == 0 {
			t.Fatalf("%s: no snapshot carries haade.pipeline=%s", ident, e.pipe)
		}
		last[ident] = prev
		var maxOff = map[int32]int64{}
		for _, ps := range out.Tables[ident].Partitions {
			if ps.Topic == e.topic {
				maxOff[int32(ps.Partition)] = ps.Max
			}
		}
		for p, m := range maxOff {
			if prev[p] <= m {
				t.Errorf("%s: newest offsets %v do not cover offset %d of partition %d", ident, prev, m, p)
			}
		}
		t.Logf("%s: %d snapshots of pipeline %s; newest offsets %v", ident, ours, e.pipe, prev)
	}
	for p, end := range ends {
		if got := max(last[bronze][p], last[dlq][p]); got != end {
			t.Errorf("partition %d: newest committed offset %d, Kafka's end offset %d", p, got, end)
		}
	}
}
