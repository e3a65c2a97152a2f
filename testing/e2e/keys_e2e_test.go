//go:build e2e

package e2e

import (
	"bytes"
	"testing"
	"time"

	"github.com/haade/haade/transforms/parse"
)

// produceKeyed sends each value with its key and the same headers, in the
// order given (kcat -H may repeat a name).
func (e *env) produceKeyed(keys []string, values [][]byte, headers ...string) {
	e.t.Helper()
	checkValues(e.t, values)
	args := []string{"-K", `\x1f`}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := e.kcatProducer(args...)
	var in [][]byte
	for i, v := range values {
		in = append(in, append([]byte(keys[i]+keyDelim), v...))
	}
	cmd.Stdin = bytes.NewReader(bytes.Join(in, []byte(delim)))
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("kcat -P -K -H: %v\n%s", err, out)
	}
}

// Keys, headers and the timestamp type are kept in both tables: a keyed
// event with headers (one name repeated) lands in bronze with them, a
// keyed malformed record and a keyed tombstone in the dead letters with
// their keys, and records without key or headers have nulls. verify checks
// every row against kcat's view of the topic (key, headers, CreateTime) as
// icebergio.ScanRows reads it, then as Spark and pyiceberg read it.
func TestKeysAndHeaders(t *testing.T) {
	e := newEnv(t, "keys", 2)
	e.produceKeyed([]string{"debtor-1", "debtor-2", "debtor-3"},
		[][]byte{event(0), parse.MalformedCorpus[0], event(1)},
		"trace=t-1", "trace=t-2", "origin=kcat")
	e.produceTombstone("debtor-4")
	e.produce([][]byte{event(2), event(3), parse.MalformedCorpus[1]})

	truth := e.consumeAll()
	keyed, withHeaders := 0, 0
	for _, k := range truth {
		if k.K != nil {
			keyed++
		}
		if len(k.H) == 3 {
			withHeaders++
		}
	}
	if len(truth) != 7 || keyed != 4 || withHeaders != 3 {
		t.Fatalf("Kafka holds %d records, %d keyed, %d with 3 headers; want 7, 4 and 3", len(truth), keyed, withHeaders)
	}
	e.runBounded(3 * time.Minute)
	e.verify(truth, verifyOpts{})
}
