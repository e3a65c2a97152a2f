//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/icebergio/rows"
	"github.com/haade/haade/testing/cmdtest"
	"github.com/haade/haade/testing/sparkpy"
	"github.com/haade/haade/transforms/tables"
)

var (
	maintainOnce sync.Once
	maintainBin  string
	maintainErr  error
)

// maintain runs `maintain ARGS` against the tier's catalog.
func (e *env) maintain(args ...string) string {
	e.t.Helper()
	maintainOnce.Do(func() {
		var bins []string
		if bins, maintainErr = (cmdtest.Builder{Nice: 10}).Build(binDir, filepath.Join(repoRoot, "pipelines/maintain")); maintainErr == nil {
			maintainBin = bins[0]
		}
	})
	if maintainErr != nil {
		e.t.Fatal(maintainErr)
	}
	full := append(args, "--catalog-uri="+catalogURI, "--warehouse="+warehouse, "--s3-endpoint="+s3Endpoint)
	out, err := exec.Command(maintainBin, full...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("maintain %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	e.t.Logf("maintain %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// evolvedRow is a bronze row with the columns the test promotes.
type evolvedRow struct {
	KafkaPartition int32   `iceberg:"kafka_partition,required"`
	KafkaOffset    int64   `iceberg:"kafka_offset,required"`
	Area           *string `iceberg:"area"`
	Amount         *int64  `iceberg:"amount"`
	Extra          *string `iceberg:"extra"`
}

var regions = []string{"eu", "us", "apac"}

// TestPromoteWhileStreaming promotes region and amount of a running
// bronze's events while they keep arriving, widens amount to long, renames
// region to area, and checks that every event is in bronze once with each
// member in exactly one place (its column from the promotion on, extra
// before; a value of the wrong type in extra), and that Spark and pyiceberg
// read the same rows across the three schemas, old rows null.
func TestPromoteWhileStreaming(t *testing.T) {
	e := newEnv(t, "evolve", 2)
	var big atomic.Bool
	gen := func(i int) []byte {
		m := map[string]any{"source": "central-bank", "title": fmt.Sprintf("event %d", i), "timestamp": "2026-05-19T10:00:00Z",
			"n": i, "region": regions[i%3], "amount": i}
		if i%97 == 0 {
			m["region"] = i // the wrong type: stays in extra
		}
		if big.Load() {
			m["amount"] = int64(1)<<40 + int64(i)
		}
		b, _ := json.Marshal(m)
		return b
	}
	sp := e.startProducer(300, gen)
	p := e.startBronze()
	e.waitRows(p, 600, 3*time.Minute)

	before := sp.count()
	e.maintain("evolve", "--table="+e.table, "--promote=region:string", "--promote=amount:int")
	promoted := sp.count()
	e.waitRows(p, promoted+1500, 3*time.Minute) // some 5 s of events with the new schema
	e.maintain("evolve", "--table="+e.table, "--widen=amount:long")
	big.Store(true)
	widened := sp.count()
	e.waitRows(p, widened+1500, 3*time.Minute)
	e.maintain("evolve", "--table="+e.table, "--rename=region:area")
	renamed := sp.count()
	e.waitRows(p, renamed+1500, 3*time.Minute)
	sent := sp.finish(t)
	e.waitRows(p, len(sent), 3*time.Minute)
	e.terminate(p, 2*time.Minute)
	t.Logf("sent %d events: promotion at %d..%d, widening at %d, rename at %d", len(sent), before, promoted, widened, renamed)
	if n := countLines(p.log, "table schema changed"); n < 3 {
		t.Errorf("bronze logged %d schema changes, want at least 3 (promote, widen, rename)", n)
	}

	var rows []evolvedRow
	if err := icebergio.ScanRows(context.Background(), e.catalog(), e.table, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sent) {
		t.Fatalf("bronze holds %d rows, %d events were sent (the dead-letter table must be empty)", len(rows), len(sent))
	}
	seen := map[int]bool{}
	var inColumn, inExtra, mismatched int
	firstColumn := -1
	for _, r := range rows {
		var ex map[string]any
		if r.Extra == nil || json.Unmarshal([]byte(*r.Extra), &ex) != nil {
			t.Fatalf("row %d/%d: extra %v", r.KafkaPartition, r.KafkaOffset, r.Extra)
		}
		n := int(ex["n"].(float64))
		if seen[n] {
			t.Errorf("event %d twice", n)
		}
		seen[n] = true
		var want map[string]any
		_ = json.Unmarshal(sent[n], &want)
		// region: in the column or in extra, never both, never neither.
		exRegion, inEx := ex["region"]
		switch {
		case r.Area != nil && inEx:
			t.Errorf("event %d: region in the column and in extra", n)
		case r.Area != nil:
			if *r.Area != want["region"] {
				t.Errorf("event %d: area %q, sent %v", n, *r.Area, want["region"])
			}
			inColumn++
			if firstColumn < 0 || n < firstColumn {
				firstColumn = n
			}
		case inEx:
			if !cmp.Equal(exRegion, want["region"]) {
				t.Errorf("event %d: extra region %v, sent %v", n, exRegion, want["region"])
			}
			if _, isNum := want["region"].(float64); isNum {
				mismatched++
			} else {
				inExtra++
				if n >= widened {
					t.Errorf("event %d (sent after the promotion had been taken up) has region in extra", n)
				}
			}
		default:
			t.Errorf("event %d: region lost", n)
		}
		exAmount, amtInEx := ex["amount"]
		switch {
		case r.Amount != nil && amtInEx:
			t.Errorf("event %d: amount in the column and in extra", n)
		case r.Amount != nil:
			if float64(*r.Amount) != want["amount"].(float64) {
				t.Errorf("event %d: amount %d, sent %v", n, *r.Amount, want["amount"])
			}
		case amtInEx:
			if !cmp.Equal(exAmount, want["amount"]) {
				t.Errorf("event %d: extra amount %v, sent %v", n, exAmount, want["amount"])
			}
		default:
			t.Errorf("event %d: amount lost", n)
		}
		if n < before && r.Area != nil {
			t.Errorf("event %d, sent before the promotion, has a region column", n)
		}
	}
	t.Logf("region: %d rows in the column (the first event %d; the promotion began at event %d), %d in extra before the promotion was taken up, %d of the wrong type in extra",
		inColumn, firstColumn, before, inExtra, mismatched)
	if inColumn == 0 || mismatched == 0 {
		t.Errorf("region filled in %d rows, %d mismatches: the test proves nothing", inColumn, mismatched)
	}

	// Spark and pyiceberg: the same rows, across the three schemas.
	byKey := map[[2]int64]evolvedRow{}
	for _, r := range rows {
		byKey[[2]int64{int64(r.KafkaPartition), r.KafkaOffset}] = r
	}
	for engine, got := range e.readEvolved("area,amount") {
		if len(got.Rows) != len(rows) {
			t.Errorf("%s reads %d rows, iceberg-go %d", engine, len(got.Rows), len(rows))
		}
		var names []string
		for _, f := range got.Schema {
			names = append(names, fmt.Sprint(f[0]))
		}
		// The promoted columns come after bronze's own, in the order promoted.
		if want := append(bronzeColumns(t), "area", "amount"); !cmp.Equal(names, want) {
			t.Errorf("%s schema %v, want the columns %v", engine, got.Schema, want)
		}
		bad := 0
		for _, gr := range got.Rows {
			p, _ := gr[0].(json.Number).Int64()
			o, _ := gr[1].(json.Number).Int64()
			r, ok := byKey[[2]int64{p, o}]
			g := evolvedRow{KafkaPartition: int32(p), KafkaOffset: o}
			if s, ok := gr[2].(string); ok {
				g.Extra = &s
			}
			if s, ok := gr[3].(string); ok {
				g.Area = &s
			}
			if num, ok := gr[4].(json.Number); ok {
				v, _ := num.Int64()
				g.Amount = &v
			}
			if !ok || !cmp.Equal(r, g) {
				if bad++; bad <= 5 {
					t.Errorf("%s row %d/%d (-iceberg-go +%s):\n%s", engine, p, o, engine, cmp.Diff(r, g))
				}
			}
		}
	}
}

type evolvedOut struct {
	Schema [][]any
	Rows   [][]any
}

// readEvolved runs py/read_evolved.py with Spark and pyiceberg.
func (e *env) readEvolved(columns string) map[string]evolvedOut {
	e.t.Helper()
	b := sparkpy.Run(e.t, e.dir, "testing/e2e/py/read_evolved.py", "--table", e.table, "--columns", columns)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var res map[string]evolvedOut
	if err := dec.Decode(&res); err != nil {
		e.t.Fatalf("read_evolved.py output: %v", err)
	}
	return res
}

// bronzeColumns names the columns of a bronze table as created, in order.
func bronzeColumns(t *testing.T) []string {
	t.Helper()
	rt, err := rows.TypeOf(reflect.TypeFor[tables.BronzeEvent]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rt.Schema().Fields() {
		names = append(names, f.Name)
	}
	return names
}
