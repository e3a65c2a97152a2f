package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sleeps are the functions of the module's tests (file:function, a method
// as Type.Method) that may call time.Sleep, each with why. A test waits for
// an event (a row count, a log line, a file, a metric, a process gone) with
// testing/wait, which checks the event itself until a deadline; it sleeps
// only where the time that passes is the case under test.
var sleeps = map[string]string{
	"io/kafkaio/read_test.go:TestReadSkewedPartitionsDropsNothing":           "produces its rounds 50 ms apart while the pipeline reads: records that arrive during the read, at no point of it in particular, are the case",
	"io/kafkaio/split_test.go:TestMissedFetchIsNotIdle":                      "kfake holds the broker's answer to every fetch 200 ms (SleepControl): a slow broker is the case; the read's own time is the test's clock",
	"testing/analytics/trino_test.go:trino.do":                               "Trino's client protocol asks again after a 502, 503 or 504: a client's pause between attempts, not a wait for an event",
	"testing/e2e/bronze_e2e_test.go:TestCrashes":                             "kill -9 at a random moment 9 to 15 s into the stream: the moment is the case",
	"testing/e2e/bronze_e2e_test.go:env.outage":                              "the service stays down for the outage's length: the outage is the case (what follows waits for bronze's next commit)",
	"testing/e2e/upsert_e2e_test.go:TestUpsertCrashes":                       "kill -9 at a random moment up to 3 s after a run's first commit, while keyed updates stream in: the moment is the case",
	"testing/e2e/route_e2e_test.go:TestRoutedCrashes":                        "kill -9 at a random moment up to 3 s after a run's first commit, while both topics grow: the moment is the case",
	"testing/e2e/registry_e2e_test.go:TestSchemaRegistryOutage":              "the registry stays away 20 s while events that need it arrive, and bronze must neither exit nor write dead letters meanwhile: the interval is the case",
	"testing/faults/cases_faults_test.go:secondSigterm":                      "two SIGTERMs a second apart, as GNU timeout sends them: the interval is the case",
	"testing/faults/cases_faults_test.go:serviceKilled":                      "the killed server stays dead 5 s while records arrive: the outage is the case",
	"testing/faults/cases_faults_test.go:sigtermSlowCommit":                  "MinIO freezes half a second after new records, while their window commits, and stays frozen 1.5 s before the SIGTERM and 5 s after it, when bronze must still run: the intervals are the case",
	"testing/faults/durable_faults_test.go:serviceRestarted":                 "the stopped server stays down 5 s while records arrive: the outage is the case",
	"testing/flinke2e/cluster_test.go:TestFlinkClusterE2E":                   "a TaskManager stays dead 10 s, the stream runs 8 s before the JobManager's kill -9, and the JobManager stays dead 5 s: the faults' timing is the case",
	"testing/flinke2e/flink_test.go:TestFlinkBronzeExactlyOnceE2E":           "records are produced for 3 s while no pipeline runs: the gap is the case",
	"testing/sidebyside/sidebyside_test.go:TestMeterTreesCountsFromTheStart": "the meter samples a busy process tree for 200 ms: the interval is what it measures",
}

// TestTestsDoNotSleep finds every time.Sleep in the module's test files
// and fails for each one whose function sleeps does not list, and for each
// entry of sleeps that no longer sleeps.
func TestTestsDoNotSleep(t *testing.T) {
	found := map[string][]string{} // file:function -> positions
	goFiles(t, func(path, rel string) {
		if !strings.HasSuffix(path, "_test.go") {
			return
		}
		for fn, pos := range sleepCalls(t, path) {
			key := rel + ":" + fn
			found[key] = append(found[key], pos...)
		}
	})
	if len(found) == 0 {
		t.Fatal("no time.Sleep found in any test file: the walk missed the module")
	}
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range found {
			if !yield(k) {
				return
			}
		}
	}) {
		if why, ok := sleeps[key]; !ok || strings.TrimSpace(why) == "" {
			t.Errorf("%s calls time.Sleep (line %s): wait for the event with testing/wait, or list it in sleeps with the reason the time must pass", key, strings.Join(found[key], ", "))
		}
	}
	for key := range sleeps {
		if _, ok := found[key]; !ok {
			t.Errorf("sleeps lists %s, which calls no time.Sleep: remove it", key)
		}
	}
}

// sleepCalls returns the lines where the file at path refers to time.Sleep
// (called or not), by the top-level function or method that holds them.
func sleepCalls(t *testing.T, path string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkg := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			pkg = "time"
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	if pkg == "" || pkg == "_" {
		return nil
	}
	calls := map[string][]string{}
	for _, d := range f.Decls {
		name := declName(d)
		ast.Inspect(d, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Sleep" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg {
				calls[name] = append(calls[name], strconv.Itoa(fset.Position(sel.Pos()).Line))
			}
			return true
		})
	}
	return calls
}

// declName names a top-level declaration: a function, Type.Method, or the
// first name a var or const declaration gives.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return d.Name.Name
		}
		typ := d.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if g, ok := typ.(*ast.IndexExpr); ok {
			typ = g.X
		}
		if g, ok := typ.(*ast.IndexListExpr); ok {
			typ = g.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			return id.Name + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if v, ok := s.(*ast.ValueSpec); ok && len(v.Names) > 0 {
				return v.Names[0].Name
			}
		}
	}
	return "?"
}

func TestSleepCallsFindsEveryReference(t *testing.T) {
	src := `package x

import tm "time"

func TestA() { tm.Sleep(1) }

type env struct{}

func (e *env) wait() { go func() { tm.Sleep(2) }() }

var pause = tm.Sleep

func TestB() { time.Sleep(1) } // another package named time, not imported: not time's Sleep
`
	path := filepath.Join(t.TempDir(), "x_test.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"TestA": {"5"}, "env.wait": {"9"}, "pause": {"11"}}
	if diff := cmp.Diff(want, sleepCalls(t, path)); diff != "" {
		t.Errorf("sleepCalls (-want +got):\n%s", diff)
	}
}
