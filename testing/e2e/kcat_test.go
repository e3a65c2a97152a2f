//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// kcat's message delimiter in produce mode: ASCII record separator, which
// no produced value contains (the malformed corpus has raw newlines).
const (
	delim    = "\x1e"
	keyDelim = "\x1f"
)

// kcatProducer is the producer command line; idempotence keeps each
// partition's order and writes nothing twice across a broker restart.
func (e *env) kcatProducer(extra ...string) *exec.Cmd {
	// -E: a broker that goes away (the Kafka outage test) is no reason to exit.
	args := append([]string{"-P", "-E", "-b", brokers, "-t", e.topic, "-D", `\x1e`, "-q",
		"-X", "enable.idempotence=true", "-X", "queue.buffering.max.messages=1000000",
		"-X", "message.timeout.ms=300000"}, extra...)
	return exec.Command("kcat", args...)
}

func checkValues(t testing.TB, values [][]byte) {
	t.Helper()
	for _, v := range values {
		if len(v) == 0 || bytes.Contains(v, []byte(delim)) || bytes.Contains(v, []byte(keyDelim)) {
			t.Fatalf("value %q cannot go through kcat -D", v)
		}
	}
}

// produce sends values with kcat, random partitions, and waits until kcat
// has delivered them. extra goes to kcat (for example a transactional.id).
func (e *env) produce(values [][]byte, extra ...string) {
	e.t.Helper()
	checkValues(e.t, values)
	cmd := e.kcatProducer(extra...)
	cmd.Stdin = bytes.NewReader(bytes.Join(values, []byte(delim)))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	e.t.Logf("kcat produced %d values in %v", len(values), time.Since(start).Round(10*time.Millisecond))
}

// produceTombstone sends one record with a key and a null value.
func (e *env) produceTombstone(key string) {
	e.t.Helper()
	cmd := e.kcatProducer("-K", `\x1f`, "-Z")
	cmd.Stdin = strings.NewReader(key + keyDelim)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("kcat -P tombstone: %v\n%s", err, out)
	}
}

// streamProducer feeds a long-running kcat -P at a steady rate.
type streamProducer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	sent  [][]byte
	err   error
	log   string
}

// startProducer produces gen(0), gen(1), ... at about rate values a second
// until stopped.
func (e *env) startProducer(rate int, gen func(i int) []byte) *streamProducer {
	e.t.Helper()
	sp := &streamProducer{cmd: e.kcatProducer(), stop: make(chan struct{}), done: make(chan struct{}), log: e.dir + "/kcat-producer.log"}
	var err error
	if sp.stdin, err = sp.cmd.StdinPipe(); err != nil {
		e.t.Fatal(err)
	}
	logf, err := os.Create(sp.log)
	if err != nil {
		e.t.Fatal(err)
	}
	sp.cmd.Stdout, sp.cmd.Stderr = logf, logf
	if err := sp.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		select {
		case <-sp.done:
		default:
			_ = sp.cmd.Process.Kill()
			<-sp.done
		}
		logf.Close()
	})
	go func() {
		defer close(sp.done)
		const tick = 50 * time.Millisecond
		per := max(1, rate*int(tick)/int(time.Second))
		w := bufio.NewWriterSize(sp.stdin, 1<<16)
		tk := time.NewTicker(tick)
		defer tk.Stop()
		i := 0
	loop:
		for {
			select {
			case <-sp.stop:
				break loop
			case <-tk.C:
			}
			batch := make([][]byte, 0, per)
			for range per {
				v := gen(i)
				i++
				batch = append(batch, v)
				w.WriteString(string(v))
				w.WriteString(delim)
			}
			// A write blocks while kcat's queue is full: back-pressure, not loss.
			if err := w.Flush(); err != nil {
				sp.err = err
				break
			}
			sp.mu.Lock()
			sp.sent = append(sp.sent, batch...)
			sp.mu.Unlock()
		}
		w.Flush()
		sp.stdin.Close()
		if err := sp.cmd.Wait(); err != nil && sp.err == nil {
			sp.err = fmt.Errorf("kcat -P: %v", err)
		}
	}()
	return sp
}

func (sp *streamProducer) count() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.sent)
}

// finish stops producing, waits until kcat has delivered everything and
// exited, and returns what was sent.
func (sp *streamProducer) finish(t testing.TB) [][]byte {
	t.Helper()
	close(sp.stop)
	select {
	case <-sp.done:
	case <-time.After(5 * time.Minute):
		t.Fatal("kcat -P did not finish delivering within 5 minutes")
	}
	if sp.err != nil {
		t.Fatalf("producer: %v\n%s", sp.err, cmdtest.TailFile(sp.log, 20))
	}
	return sp.sent
}

// krec is one record as Kafka holds it, read back with kcat.
type krec struct {
	P    int32
	O    int64
	TsMs int64
	V    []byte      // nil: null value (tombstone)
	K    []byte      // nil: no key
	H    [][2]string // the headers, in order (kcat prints them as text)
	// TsType is whose time TsMs is, "CreateTime" or "LogAppendTime"; ""
	// until timestampTypes has asked kcat.
	TsType string
}

// consumeAll reads the whole topic with kcat, the truth the tables are
// compared with: every record, its partition, offset, timestamp, key, value
// and headers (test headers are text without commas or equals signs).
func (e *env) consumeAll() []krec {
	e.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", "-C", "-b", brokers, "-t", e.topic, "-o", "beginning", "-e", "-q",
		"-f", `%p %o %T %S %K\n%k%s\n%h\n`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("kcat -C: %v\n%s", err, stderr.String())
	}
	var recs []krec
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		hdr, err := r.ReadString('\n')
		if err == io.EOF && hdr == "" {
			break
		}
		if err != nil {
			e.t.Fatalf("kcat -C output: %v after %d records", err, len(recs))
		}
		var k krec
		var n, kn int
		if _, err := fmt.Sscanf(hdr, "%d %d %d %d %d\n", &k.P, &k.O, &k.TsMs, &n, &kn); err != nil {
			e.t.Fatalf("kcat -C header %q: %v", hdr, err)
		}
		if kn >= 0 {
			k.K = make([]byte, kn)
			if _, err := io.ReadFull(r, k.K); err != nil {
				e.t.Fatal(err)
			}
		}
		if n >= 0 {
			k.V = make([]byte, n)
			if _, err := io.ReadFull(r, k.V); err != nil {
				e.t.Fatal(err)
			}
		}
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			e.t.Fatalf("kcat -C output: no newline after record %d/%d", k.P, k.O)
		}
		headers, err := r.ReadString('\n')
		if err != nil {
			e.t.Fatalf("kcat -C output: no headers line after record %d/%d: %v", k.P, k.O, err)
		}
		if headers = strings.TrimSuffix(headers, "\n"); headers != "" {
			for _, h := range strings.Split(headers, ",") {
				name, value, _ := strings.Cut(h, "=")
				k.H = append(k.H, [2]string{name, value})
			}
		}
		recs = append(recs, k)
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].P != recs[j].P {
			return recs[i].P < recs[j].P
		}
		return recs[i].O < recs[j].O
	})
	e.t.Logf("kcat consumed %d records in %v", len(recs), time.Since(start).Round(10*time.Millisecond))
	return recs
}

// timestampTypes sets each record's TsType from kcat -J, whose envelope
// says whose time the timestamp is ("tstype": "create" or "logappend");
// its format strings have no token for it.
func (e *env) timestampTypes(recs []krec) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kcat", "-C", "-b", brokers, "-t", e.topic, "-o", "beginning", "-e", "-q", "-J").Output()
	if err != nil {
		e.t.Fatalf("kcat -C -J: %v", err)
	}
	types := map[[2]int64]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var env struct {
			Partition int32  `json:"partition"`
			Offset    int64  `json:"offset"`
			TsType    string `json:"tstype"`
			Ts        int64  `json:"ts"`
		}
		if err := dec.Decode(&env); err == io.EOF {
			break
		} else if err != nil {
			e.t.Fatalf("kcat -C -J output: %v", err)
		}
		switch env.TsType {
		case "create":
			types[[2]int64{int64(env.Partition), env.Offset}] = "CreateTime"
		case "logappend":
			types[[2]int64{int64(env.Partition), env.Offset}] = "LogAppendTime"
		default:
			e.t.Fatalf("kcat -C -J: record %d/%d has tstype %q", env.Partition, env.Offset, env.TsType)
		}
	}
	for i := range recs {
		t, ok := types[[2]int64{int64(recs[i].P), recs[i].O}]
		if !ok {
			e.t.Fatalf("kcat -C -J did not print record %d/%d", recs[i].P, recs[i].O)
		}
		recs[i].TsType = t
	}
}

var queryLine = regexp.MustCompile(`\[(\d+)\] offset (\d+)`)

// endOffsets asks Kafka (kcat -Q) for each partition's end offset.
func (e *env) endOffsets() map[int32]int64 {
	e.t.Helper()
	args := []string{"-Q", "-b", brokers}
	for p := 0; p < e.partitions; p++ {
		args = append(args, "-t", fmt.Sprintf("%s:%d:-1", e.topic, p))
	}
	out, err := exec.Command("kcat", args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("kcat -Q: %v\n%s", err, out)
	}
	ends := map[int32]int64{}
	for _, m := range queryLine.FindAllStringSubmatch(string(out), -1) {
		p, _ := strconv.Atoi(m[1])
		o, _ := strconv.ParseInt(m[2], 10, 64)
		ends[int32(p)] = o
	}
	if len(ends) != e.partitions {
		e.t.Fatalf("kcat -Q gave %d partitions, want %d:\n%s", len(ends), e.partitions, out)
	}
	return ends
}

// checkDelivered asserts that Kafka holds every sent value: the producer
// lost nothing, so a missing row is the pipeline's fault.
func checkDelivered(t testing.TB, sent [][]byte, truth []krec) {
	t.Helper()
	have := map[string]int{}
	for _, k := range truth {
		if k.V != nil {
			have[string(k.V)]++
		}
	}
	missing := 0
	for _, v := range sent {
		if have[string(v)] == 0 {
			missing++
			if missing <= 3 {
				t.Errorf("sent but not in Kafka: %q", v)
			}
			continue
		}
		have[string(v)]--
	}
	if missing > 0 {
		t.Fatalf("%d of %d sent values are not in Kafka", missing, len(sent))
	}
}
