//go:build faults

package faults

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haade/haade/testing/faults/kit"
	"github.com/haade/haade/testing/wait"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestFaults replays each fault class; the table is printed at the end.
func TestFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, name string)
	}{
		{"postgres-killed", serviceKilled("postgres")},
		{"postgres-restarted", serviceRestarted("postgres")},
		{"minio-killed", serviceKilled("minio")},
		{"kafka-killed", serviceKilled("kafka")},
		{"sigterm-slow-commit", sigtermSlowCommit},
		{"kill9-after-commit", kill9AfterCommit},
		{"same-pipeline-id-twice", samePipelineID},
		{"huge-and-malformed", hugeAndMalformed},
		{"full-disk", fullDisk},
		{"second-sigterm-while-retrying", secondSigterm},
		{"partitions-added-while-running", partitionsAdded},
		{"second-pipeline-id", secondPipelineID},
		{"recreated-topic", recreatedTopic},
		{"foreign-expire-snapshots", foreignExpire},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, c.name) })
	}
}

// caughtUp polls the tables until they hold every record produced once,
// while p runs, for up to d.
func (c *fcase) caughtUp(p *proc, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = wait.Every(ctx, time.Second, func() error {
		if tl := c.tally(); !tl.OK() && p.running() {
			return errors.New(tl.String())
		}
		return nil
	})
	return c.tally().OK()
}

// stopAndRecover ends a streaming run with SIGTERM (exit 0 wanted), then
// runs the recovery run.
func (c *fcase) stopAndRecover(p *proc) {
	if p.running() {
		if err := c.terminate(p, 2*time.Minute); err != nil {
			c.fail("SIGTERM: %s: %s", exit(err), lastLine(p.log))
		}
	} else {
		c.fail("%s exited by itself: %s: %s", p.name, exit(p.err), lastLine(p.log))
	}
	c.recover()
}

func retries(p *proc) int {
	b, _ := os.ReadFile(p.log)
	return strings.Count(string(b), "msg=retrying")
}

// serviceKilled: the server dies while bronze streams, comes back after a
// few seconds, and bronze must catch up without a restart.
func serviceKilled(svc string) func(t *testing.T, name string) {
	return func(t *testing.T, name string) {
		c := newCase(t, name, 4)
		c.produce(1000)
		p := c.start()
		c.waitCommits(p, 1, 90*time.Second)
		crash(t, svc)
		t.Cleanup(func() { startService(t, svc) })
		if svc != "kafka" {
			c.produce(1000) // while it is down
		}
		time.Sleep(5 * time.Second)
		startService(t, svc)
		c.produce(1000)
		if !c.caughtUp(p, 90*time.Second) {
			c.fail("did not catch up within 90 s of %s coming back: %v", svc, c.tally())
		}
		c.note("%d retries logged", retries(p))
		c.stopAndRecover(p)
		c.finish()
	}
}

// sigtermSlowCommit: MinIO is frozen (SIGSTOP) while a window commits,
// bronze gets SIGTERM, MinIO thaws 5 s later; bronze must finish the commit
// it is in and exit 0, and the next run must find every record once. (What
// bronze had not read at SIGTERM is the next run's: reads stop at their
// current offsets.)
func sigtermSlowCommit(t *testing.T, name string) {
	c := newCase(t, name, 4)
	c.produce(1000)
	p := c.start()
	if !c.caughtUp(p, 90*time.Second) {
		t.Fatalf("bronze did not catch up before the fault: %v", c.tally())
	}
	c.produce(500)
	time.Sleep(500 * time.Millisecond)
	pid := servicePid(t, "minio")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			_ = syscall.Kill(pid, syscall.SIGCONT)
			thawed = true
		}
	}
	t.Cleanup(thaw)
	time.Sleep(1500 * time.Millisecond)
	p.signal(syscall.SIGTERM)
	time.Sleep(5 * time.Second)
	if !p.running() {
		c.fail("exited while MinIO was frozen: %s", exit(p.err))
	}
	thaw()
	if err := p.wait(2 * time.Minute); err != nil {
		c.fail("after SIGTERM: %s: %s", exit(err), lastLine(p.log))
	} else {
		c.note("exit 0 after MinIO thawed")
	}
	if finding := unfinishedCommit(p); finding != "" {
		c.fail("%s", finding)
	}
	if tl := c.tally(); tl.Lost > 0 {
		c.note("%d records left for the next run", tl.Lost)
	}
	c.recover()
	c.finish()
}

// unfinishedCommit reads a stopped run's log: a commit that was still
// retrying when the process exited (a "retrying" line after the stop and
// no "committed" line after the last retry) means the last window was not
// committed.
func unfinishedCommit(p *proc) string {
	b, _ := os.ReadFile(p.log)
	log := string(b)
	stop := strings.Index(log, "msg=\"stopping")
	if stop < 0 {
		return ""
	}
	after := log[stop:]
	lastRetry := strings.LastIndex(after, "msg=retrying")
	lastCommit := strings.LastIndex(after, "msg=committed")
	if lastRetry >= 0 && lastCommit < lastRetry {
		return fmt.Sprintf("exited (%s) while a commit was still retrying: its window was not committed", exit(p.err))
	}
	return ""
}

// kill9AfterCommit: three times, SIGKILL the moment a commit is logged,
// produce more, start again.
func kill9AfterCommit(t *testing.T, name string) {
	c := newCase(t, name, 4)
	c.produce(2000)
	for i := range 3 {
		p := c.start()
		c.waitCommits(p, 1, 90*time.Second)
		p.signal(syscall.SIGKILL)
		<-p.done
		c.produce(500)
		_ = i
	}
	c.note("3 kill -9s, each right after a commit")
	p := c.start()
	if !c.caughtUp(p, 90*time.Second) {
		c.fail("the run after the kills did not catch up: %v", c.tally())
	}
	c.stopAndRecover(p)
	c.finish()
}

// samePipelineID: two bounded processes at once, same pipeline id and tables.
func samePipelineID(t *testing.T, name string) {
	c := newCase(t, name, 4)
	c.produce(3000)
	p1 := c.start("--bounded")
	p2 := c.start("--bounded")
	e1, e2 := p1.wait(4*time.Minute), p2.wait(4*time.Minute)
	c.note("the two runs: %s, %s", exit(e1), exit(e2))
	if e1 != nil && e2 != nil {
		c.fail("both runs failed: %s", lastLine(p2.log))
	}
	for _, pe := range []struct {
		p   *proc
		err error
	}{{p1, e1}, {p2, e2}} {
		if pe.err != nil && !pe.p.logHas("another writer") {
			c.note("the refusal does not say \"another writer\"")
		}
	}
	c.recover()
	c.finish()
}

// hugeAndMalformed: records near Kafka's 1 MB limit, binary garbage,
// invalid UTF-8, empty values, tombstones, deep nesting, odd timestamps.
func hugeAndMalformed(t *testing.T, name string) {
	c := newCase(t, name, 2)
	garbage := make([]byte, 900_000)
	_, _ = rand.Read(garbage)
	odd := [][]byte{
		fmt.Appendf(nil, `{"source": "huge", "title": %q, "timestamp": "2026-05-19T10:00:00Z"}`, strings.Repeat("x", 900_000)),
		garbage,
		[]byte("{\"source\": \"\xff\xfe\", \"title\": \"bad utf-8\", \"timestamp\": \"2026-05-19T10:00:00Z\"}"),
		[]byte("\x00\x00\x00\x00"),
		{},
		nil,
		bytes.Repeat([]byte("["), 100_000),
		[]byte(`{"source": "n", "title": "big number", "timestamp": "2026-05-19T10:00:00Z", "n": 1e400}`),
		[]byte(`{"source": "leap", "title": "leap second", "timestamp": "2016-12-31T23:59:60Z"}`),
		[]byte(`{"source": "y0", "title": "year 0", "timestamp": "0000-01-01T00:00:00+23:59"}`),
		[]byte(`{"source": "y10k", "title": "year 10000", "timestamp": "9999-12-31T23:59:59-23:59"}`),
		[]byte(`{"source": "dup", "source": "dup", "title": "t", "timestamp": "2026-05-19T10:00:00Z"}`),
		[]byte(`{"source": "` + strings.Repeat(`\u00e9`, 50_000) + `", "title": "escapes", "timestamp": "2026-05-19T10:00:00Z"}`),
	}
	c.produceValues(500+len(odd), func(i int) []byte {
		if i%40 == 0 && i/40 < len(odd) {
			return odd[i/40]
		}
		return value(i)
	})
	p, err := c.bounded()
	if err != nil {
		c.fail("bronze --bounded: %s: %s", exit(err), lastLine(p.log))
	}
	c.note("%d odd records among %d", len(odd), c.sent)
	c.finish()
}

// fullDisk: a file warehouse on a 1 MiB tmpfs fills up while bronze streams;
// then the tmpfs grows and bronze must catch up.
func fullDisk(t *testing.T, name string) {
	dir := filepath.Join(t.TempDir(), "warehouse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		record(row{Case: name, Outcome: "skipped: cannot mount a tmpfs (" + strings.TrimSpace(string(out)) + "); run as root", Skipped: true})
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	c := newCase(t, name, 2)
	c.cat.Warehouse = "file://" + dir
	c.cat.URI = filepath.Join(c.dir, "catalog.db")
	c.cat.S3Endpoint = ""
	c.produceValues(3000, func(i int) []byte {
		b := make([]byte, 600)
		_, _ = rand.Read(b)
		return fmt.Appendf(nil, `{"source": "disk", "title": "%s", "timestamp": "2026-05-19T10:00:00Z", "i": %d}`, hex.EncodeToString(b), i)
	})
	args := []string{}
	for _, a := range c.args() {
		if !strings.HasPrefix(a, "--s3-endpoint=") {
			args = append(args, a)
		}
	}
	p := c.startArgs(args)
	// Up to 15 s for bronze to hit the full disk (or give up on it).
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = wait.Every(ctx, 100*time.Millisecond, func() error {
		if !p.logHas("no space left on device") && p.running() {
			return errors.New("no ENOSPC logged")
		}
		return nil
	})
	full := p.logHas("no space left on device")
	if !p.running() {
		c.note("exited on the full disk: %s: %s", exit(p.err), lastLine(p.log))
	} else {
		c.note("waited on the full disk (%d retries)", retries(p))
	}
	if !full {
		c.note("no ENOSPC logged")
	}
	if out, err := exec.Command("mount", "-o", "remount,size=256m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if p.running() {
		if !c.caughtUp(p, 90*time.Second) {
			c.fail("did not catch up within 90 s once the disk had room: %v", c.tally())
		}
		if err := c.terminate(p, 2*time.Minute); err != nil {
			c.fail("SIGTERM: %s", exit(err))
		}
	}
	rp := c.startArgs(append(args, "--bounded"))
	if err := rp.wait(4 * time.Minute); err != nil {
		c.fail("the recovery run: %s: %s", exit(err), lastLine(rp.log))
	}
	c.finish()
}

// secondSigterm: MinIO dies so the commit retries; two SIGTERMs a second
// apart (as GNU timeout sends). The second one must end bronze at once,
// with one clear line, and the next run (MinIO back) must hold every
// record once: the window that was retrying is neither lost nor stored
// twice.
func secondSigterm(t *testing.T, name string) {
	c := newCase(t, name, 4)
	c.produce(1000)
	p := c.start()
	c.waitCommits(p, 1, 90*time.Second)
	c.produce(1000)
	crash(t, "minio")
	t.Cleanup(func() { startService(t, "minio") })
	// Up to 30 s for a write or commit to fail on the dead MinIO and retry.
	before := retries(p)
	retryCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := wait.Every(retryCtx, 100*time.Millisecond, func() error {
		if retries(p) == before && p.running() {
			return errors.New("no retry logged since MinIO died")
		}
		return nil
	}); err != nil {
		c.note("%v", err)
	}
	p.signal(syscall.SIGTERM)
	time.Sleep(time.Second)
	p.signal(syscall.SIGTERM)
	second := time.Now()
	err := p.wait(15 * time.Second)
	switch {
	case errorsIsTimeout(err):
		p.signal(syscall.SIGKILL)
		<-p.done
		c.fail("no exit within 15 s of the second SIGTERM")
	case !p.logHas("second signal: exiting now"):
		c.fail("exited (%s) without saying why: %s", exit(err), lastLine(p.log))
	default:
		c.note("%s %v after the second SIGTERM, saying so", exit(err), time.Since(second).Round(100*time.Millisecond))
	}
	startService(t, "minio")
	if tl := c.tally(); tl.Lost > 0 {
		c.note("%d records for the next run", tl.Lost)
	}
	c.recover()
	c.finish()
}

func errorsIsTimeout(err error) bool { return err == errTimeout }

// partitionsAdded: the topic grows from 2 to 4 partitions while bronze
// streams; the records of the new partitions must land without a restart.
func partitionsAdded(t *testing.T, name string) {
	c := newCase(t, name, 2)
	c.produce(500)
	p := c.start()
	c.waitCommits(p, 1, 90*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.client())
	if _, err := adm.CreatePartitions(ctx, 2, c.topic); err != nil {
		t.Fatal(err)
	}
	// The producer's client sees the new partitions once the broker's
	// metadata lists them.
	if err := wait.Until(ctx, func() error {
		td, err := adm.ListTopics(ctx, c.topic)
		if err != nil {
			return err
		}
		if n := len(td[c.topic].Partitions); n != 4 {
			return fmt.Errorf("%s has %d partitions, want 4", c.topic, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.produce(1000)
	if !c.caughtUp(p, 30*time.Second) {
		tl := c.tally()
		c.fail("records of the new partitions were not read while running (%d waited for a restart)", tl.Lost)
	}
	c.stopAndRecover(p)
	c.finish()
}

// secondPipelineID: a second pipeline id on tables another id already
// feeds must be refused (or at least not store every record twice).
func secondPipelineID(t *testing.T, name string) {
	c := newCase(t, name, 2)
	c.produce(1000)
	if p, err := c.bounded(); err != nil {
		t.Fatalf("first run: %s: %s", exit(err), lastLine(p.log))
	}
	c.produce(500)
	p, err := c.bounded("--pipeline-id=" + c.pipe + "-other")
	if err == nil {
		if tl := c.tally(); tl.Duplicated > 0 {
			c.fail("a second pipeline id was not refused and stored %d records twice", tl.Duplicated)
		}
	} else {
		c.note("second id refused: %s", lastLine(p.log))
	}
	c.recover()
	c.finish()
}

// recreatedTopic: the topic is deleted and made again, and grows past the
// offsets the tables hold. Bronze must refuse loudly, naming the topic, or
// read the new topic from its start; never skip its first records.
func recreatedTopic(t *testing.T, name string) {
	c := newCase(t, name, 2)
	c.produce(500)
	if p, err := c.bounded(); err != nil {
		t.Fatalf("first run: %s: %s", exit(err), lastLine(p.log))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.client())
	if _, err := adm.DeleteTopic(ctx, c.topic); err != nil {
		t.Fatal(err)
	}
	if err := wait.Until(ctx, func() error { // until the deletion is through
		r, err := adm.CreateTopic(ctx, 2, 1, nil, c.topic)
		if err == nil {
			err = r.Err
		}
		return err
	}); err != nil {
		t.Fatalf("recreate %s: %v", c.topic, err)
	}
	// The new topic's records have the old ones' coordinates: count rows.
	old := c.keys
	c.keys = nil
	c.sent = 0
	c.produce(1500)
	newKeys := c.keys
	p, err := c.bounded()
	if err != nil {
		// Refused: it must name the topic, and the flag that reads the new topic.
		if !p.logHas("--topic=" + c.topic) {
			c.fail("refused without naming --topic: %s", lastLine(p.log))
		}
		flag := "--on-topic-recreated=earliest"
		if p.logHas(flag) {
			c.note("refused, naming --topic and %s; then read with it", flag)
			p, err = c.bounded(flag)
			if err != nil {
				c.fail("with %s: %s: %s", flag, exit(err), lastLine(p.log))
			}
		} else {
			c.note("refused: %s", lastLine(p.log))
		}
	}
	seen, serr := kit.Seen(ctx, c.cat, c.topic, c.table, c.dlq)
	if serr != nil {
		t.Fatal(serr)
	}
	total := 0
	for _, n := range seen {
		total += n
	}
	landed := total - len(old)
	tl := kit.Tally{Produced: len(old) + len(newKeys)}
	switch {
	case landed < len(newKeys):
		tl.Lost = len(newKeys) - landed
		c.fail("%d of the new topic's %d records are in no table", tl.Lost, len(newKeys))
	case landed > len(newKeys):
		tl.Duplicated = landed - len(newKeys)
		c.fail("%d more rows than the new topic holds", tl.Duplicated)
	case err == nil:
		c.note("the new topic's records all landed")
	}
	c.t.Logf("%s: %v", name, tl)
	outcome := "ok"
	if len(c.failed) > 0 {
		outcome = "FAIL: " + strings.Join(c.failed, "; ")
		t.Errorf("%s", outcome)
	}
	if len(c.notes) > 0 {
		outcome += " (" + strings.Join(c.notes, "; ") + ")"
	}
	record(row{Case: name, Outcome: strings.ReplaceAll(outcome, "|", "/"), Tally: tl})
}

// foreignExpire: another engine appends a snapshot without HAADE's keys and
// expires every older snapshot; bronze must not read the topic again.
func foreignExpire(t *testing.T, name string) {
	c := newCase(t, name, 2)
	c.produce(1000)
	if p, err := c.bounded(); err != nil {
		t.Fatalf("first run: %s: %s", exit(err), lastLine(p.log))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	left, err := kit.ForeignAppendAndExpire(ctx, c.cat, c.table)
	if err != nil {
		t.Fatal(err)
	}
	c.note("foreign append + expire_snapshots left %d snapshot", left)
	c.produce(500)
	if p, err := c.bounded(); err != nil {
		c.fail("after the expiry: %s: %s", exit(err), lastLine(p.log))
	}
	c.finish()
}
