package runners

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/go-cmp/cmp"
)

// testConfig is the Config of the pipelines of these tests.
type testConfig struct {
	Common
	Words string
}

func testFlags(fs *flag.FlagSet) func() (testConfig, error) {
	common := CommonFlags(fs, Defaults{Pipeline: "words", Bounded: "read the words once"})
	words := fs.String("words", "a,b", "comma-separated words")
	return func() (testConfig, error) {
		c, err := common()
		if err == nil && *words == "" {
			err = errors.New("--words: empty")
		}
		return testConfig{Common: c, Words: *words}, err
	}
}

// release is closed by a test's Watch: until then, the words of the first
// plan wait in waitFn (Prism runs the workers in this process).
var release chan struct{}

// released is a closed channel: the words do not wait.
func released() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func waitFn(w string) string {
	<-release
	return w
}

func init() { register.Function1x1(waitFn) }

// wordsPipeline builds Create(words) -> wait -> passert, and says how often
// it was built and what Summary saw.
func wordsPipeline(builds *int, summary *string) Pipeline[testConfig] {
	return Pipeline[testConfig]{
		Name:  "words",
		Flags: testFlags,
		Build: func(ctx context.Context, s beam.Scope, cfg testConfig) (Job, error) {
			*builds++
			words := strings.Split(cfg.Words, ",")
			col := beam.ParDo(s, waitFn, beam.CreateList(s, words))
			passert.Equals(s, col, stringsAny(words)...)
			return Job{Stoppable: true}, nil
		},
		Summary: func(ctx context.Context, stdout io.Writer, cfg testConfig, took time.Duration) error {
			*summary = fmt.Sprintf("%s bounded=%v pipeline=%s", cfg.Words, cfg.Bounded, cfg.Pipeline)
			fmt.Fprintln(stdout, *summary)
			return nil
		},
	}
}

func stringsAny(ws []string) []any {
	out := make([]any, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return out
}

func noEnv(string) string { return "" }

// syncBuffer is a strings.Builder that Prism's log goroutines, which go on
// writing to the default logger after a run returns, may share with a test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A run: the flags and HAADE_* reach the Config, the pipeline runs, the
// summary prints, exit 0.
func TestMainRuns(t *testing.T) {
	release = released()
	var builds int
	var summary string
	p := wordsPipeline(&builds, &summary)
	env := map[string]string{"HAADE_WORDS": "x,y,z", "HAADE_PIPELINE_ID": "w1"}
	var out, errb syncBuffer
	code := p.Run([]string{"--bounded", "--metrics-addr="}, func(k string) string { return env[k] }, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	if diff := cmp.Diff("x,y,z bounded=true pipeline=w1\n", out.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if builds != 1 {
		t.Errorf("built %d times, want 1", builds)
	}
}

// The exit codes: a bad flag or Config is one line naming the flag and 2;
// --help is 0; Build's error is 2 unless Exit says otherwise; Summary's is 1.
func TestMainExitCodes(t *testing.T) {
	release = released()
	var builds int
	var summary string
	base := wordsPipeline(&builds, &summary)
	buildFails := base
	buildFails.Build = func(context.Context, beam.Scope, testConfig) (Job, error) {
		return Job{}, errors.New("--words: no such table")
	}
	startFails := base
	startFails.Start = func(context.Context, *testConfig, io.Writer) (func(), error) {
		return nil, Exit(1, errors.New("embedded demo: no port"))
	}
	summaryFails := base
	summaryFails.Summary = func(context.Context, io.Writer, testConfig, time.Duration) error {
		return errors.New("summary: catalog gone")
	}
	for _, tc := range []struct {
		name   string
		p      Pipeline[testConfig]
		args   []string
		code   int
		stderr string // the last line of stderr starts with it
	}{
		{"bad runner", base, []string{"--runner=spark"}, 2, `words: runners: bad runner: --runner="spark"`},
		{"bad own flag", base, []string{"--words="}, 2, "words: --words: empty"},
		{"unknown flag", base, []string{"--nope"}, 2, "words: "},
		{"bad log format", base, []string{"--log-format=xml"}, 2, `words: --log-format="xml"`},
		{"help", base, []string{"--help"}, 0, ""},
		{"build fails", buildFails, []string{"--metrics-addr="}, 2, "words: --words: no such table"},
		{"start fails", startFails, []string{"--metrics-addr="}, 1, "words: embedded demo: no port"},
		{"summary fails", summaryFails, []string{"--metrics-addr="}, 1, "words: summary: catalog gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			if code := tc.p.Run(tc.args, noEnv, &out, &errb); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errb.String())
			}
			// Main's own lines are the plain ones. Prism's worker logs (slog
			// lines, "time=...") as it stops, asynchronously, and one of them
			// came after Main's error line once: they are not Main's last word.
			var lines []string
			for _, l := range strings.Split(strings.TrimRight(errb.String(), "\n"), "\n") {
				if !strings.HasPrefix(l, "time=") {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 {
				lines = []string{""}
			}
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tc.stderr) {
				t.Errorf("stderr's last line of Main's own %q, want it to start with %q", last, tc.stderr)
			}
			if tc.name == "help" && !strings.Contains(out.String(), "-words") {
				t.Errorf("--help printed no usage of --words:\n%s", out.String())
			}
		})
	}
}

// Watch's replan: the sources stop, the run ends, Main builds and runs
// again, then exits 0 once a run ends without a replan.
func TestMainReplans(t *testing.T) {
	first := make(chan struct{})
	release = first
	var builds int
	var summary string
	p := wordsPipeline(&builds, &summary)
	build := p.Build
	p.Build = func(ctx context.Context, s beam.Scope, cfg testConfig) (Job, error) {
		job, err := build(ctx, s, cfg)
		if builds == 1 {
			job.Watch = func(ctx context.Context, replan func()) {
				replan()
				close(first) // the first run may end now
			}
		}
		return job, err
	}
	var out, errb syncBuffer
	if code := p.Run([]string{"--metrics-addr="}, noEnv, &out, &errb); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	if builds != 2 {
		t.Errorf("built %d times, want 2 (once more after the replan)", builds)
	}
	if !strings.Contains(errb.String(), "running again, planned anew") {
		t.Errorf("no log line says the pipeline runs again; stderr:\n%s", errb.String())
	}
}
