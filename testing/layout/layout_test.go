// Package layout holds the tests that keep the module's shape: imports
// pointing one way (docs/DESIGN.md, "Packages and the direction of their
// imports"), an event parser of plain Go, a short example pipeline, and
// tests that wait for events instead of sleeping (sleep_test.go).
package layout

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/haade/haade/"

// goList runs go list with args and returns the lines it prints, blank
// lines left out.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}

// deps lists the packages that pkg imports, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	return goList(t, "-deps", pkg)
}

// packages lists the module's packages under dir ("io", "pipelines").
func packages(t *testing.T, dir string) []string {
	t.Helper()
	return goList(t, module+dir+"/...")
}

func TestImportsPointOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: go list cannot run")
	}
	rules := []struct {
		dir       string
		forbidden []string // import path prefixes, under the module
		except    []string // packages of dir the rule does not cover, with the reason below
		why       string
	}{
		{"io", []string{"runners/", "pipelines/", "testing/"}, nil,
			"io owns its collectors; the command registers them"},
		{"internal", []string{"io/", "transforms/", "runners/", "pipelines/", "testing/"}, nil,
			"internal/stop, internal/secret and internal/flagenv are shared by the harness, the io packages and the commands, so they import none of them"},
		{"transforms", []string{"io/", "runners/", "pipelines/", "testing/"}, nil,
			"stages are plain functions over Beam: tables are read and written by io, rows reach transforms as PCollections"},
		// The image holds every main under pipelines/ (the Dockerfile
		// builds ./pipelines/...): measuring tools such as the benchmark
		// live under testing/.
		{"pipelines", []string{"testing/"}, nil,
			"no production binary links the test kits"},
	}
	for _, r := range rules {
		for _, pkg := range packages(t, r.dir) {
			if slices.Contains(r.except, pkg) {
				continue
			}
			for _, d := range deps(t, pkg) {
				for _, f := range r.forbidden {
					if strings.HasPrefix(d, module+f) {
						t.Errorf("%s imports %s: %s", strings.TrimPrefix(pkg, module), strings.TrimPrefix(d, module), r.why)
					}
				}
			}
		}
	}
}

// The harness stops the sources through internal/stop instead of calling
// the io packages, so that a pipeline links the io packages it uses and no
// others: gold, which reads no Kafka, links no Kafka client. runners links
// no io package at all (runners/lineage's Iceberg datasets are in
// runners/lineage/icetables, which a pipeline imports), and no package of
// runners/ links franz-go.
func TestHarnessImportsNoIO(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: go list cannot run")
	}
	for _, d := range deps(t, module+"runners") {
		if strings.HasPrefix(d, module+"io/") {
			t.Errorf("runners links %s: the harness stops sources through internal/stop, and lineage's Iceberg datasets are in runners/lineage/icetables", strings.TrimPrefix(d, module))
		}
	}
	for _, pkg := range packages(t, "runners") {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, "github.com/twmb/franz-go/") {
				t.Errorf("%s links %s: only a pipeline that reads Kafka links a Kafka client", strings.TrimPrefix(pkg, module), d)
			}
		}
	}
}

// No transforms package pulls in a SQL driver or the AWS SDK: the stages,
// the table layer and the offsets are neutral.
func TestLightPackagesStayLight(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: go list cannot run")
	}
	heavy := []string{"github.com/aws/", "github.com/uptrace/bun", "modernc.org/sqlite", "github.com/lib/pq", "github.com/jackc/"}
	pkgs := packages(t, "transforms")
	if len(pkgs) < 7 {
		t.Fatalf("go list transforms/... found %d packages, want at least 7: %v", len(pkgs), pkgs)
	}
	for _, pkg := range pkgs {
		for _, d := range deps(t, pkg) {
			for _, h := range heavy {
				if strings.HasPrefix(d, h) {
					t.Errorf("%s imports %s", strings.TrimPrefix(pkg, module), d)
				}
			}
		}
	}
}

// The event parser imports only the standard library, and its tests add
// only go-cmp: CI fuzzes it (.ci/run, "fuzz the event parser briefly"), and
// go test -fuzz instruments every package the test binary links. When the
// parser was part of transforms/parse, whose tests link Beam, Prometheus's
// client and HAADE's tables and offsets (about 600 packages outside the
// standard library), the fuzz step spent about 4 minutes of a fresh machine
// compiling them for 45 seconds of fuzzing.
func TestEventParserIsPlainGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: go list cannot run")
	}
	const pkg = module + "transforms/parse/event"
	const notStandard = "{{if not .Standard}}{{.ImportPath}}{{end}}"
	// outside lists the packages of go list -deps args that are neither the
	// standard library nor pkg, nor allowed; go list prints a package after
	// its own imports, so the last ones are those nearest pkg.
	outside := func(allowed func(string) bool, args ...string) []string {
		var out []string
		for _, d := range goList(t, append([]string{"-deps", "-f", notStandard}, args...)...) {
			d, _, _ = strings.Cut(d, " [") // "p [p.test]" is p compiled with its tests
			if d != pkg && d != pkg+".test" && !allowed(d) {
				out = append(out, d)
			}
		}
		return out
	}
	const why = "CI fuzzes it, and go test -fuzz instruments every package the test binary links"
	if ds := outside(func(string) bool { return false }, pkg); len(ds) > 0 {
		t.Errorf("transforms/parse/event links %d packages outside the standard library, the nearest %q: %s", len(ds), ds[max(0, len(ds)-3):], why)
	}
	goCmp := func(d string) bool { return strings.HasPrefix(d, "github.com/google/go-cmp/") }
	if ds := outside(goCmp, "-test", pkg); len(ds) > 0 {
		t.Errorf("the tests of transforms/parse/event link %d packages that are neither the standard library nor go-cmp, the nearest %q: %s", len(ds), ds[max(0, len(ds)-3):], why)
	}
}

// codeLines counts the lines of a Go file that hold code: not blank, not
// only comments, and not in its package clause or import declarations.
func codeLines(t *testing.T, path string) int {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	skip := map[int]bool{fset.Position(f.Package).Line: true}
	for _, d := range f.Decls {
		for l := fset.Position(d.Pos()).Line; l <= fset.Position(d.End()).Line; l++ {
			skip[l] = true
		}
	}
	lines := map[int]bool{}
	var sc scanner.Scanner
	sc.Init(fset.AddFile(path, -1, len(src)), src, nil, 0) // comments are skipped
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted at a line's end, after code or after a comment
		}
		if l := fset.Position(pos).Line; !skip[l] {
			lines[l] = true
		}
	}
	return len(lines)
}

// A pipeline that reads a table is short: the example a pipeline author
// copies, which the README shows, is at most 40 lines of code.
func TestExamplePipelineIsShort(t *testing.T) {
	const path, max = "../../pipelines/examples/sourcecounts/main.go", 40
	n := codeLines(t, path)
	t.Logf("%s: %d lines of code", path, n)
	if n > max {
		t.Errorf("%s has %d lines of code (not blank, not comments, imports not counted), want at most %d", path, n, max)
	}
}

// The README's example of a pipeline that reads a table is the example's
// file, from its table down: a change to one that misses the other fails.
func TestReadmeShowsTheExample(t *testing.T) {
	src, err := os.ReadFile("../../pipelines/examples/sourcecounts/main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte("// sourceHourly"))
	if i < 0 {
		t.Fatal("sourcecounts/main.go has no \"// sourceHourly\" line for the README's example to start at")
	}
	if block := "```go\n" + string(src[i:]) + "```\n"; !bytes.Contains(readme, []byte(block)) {
		t.Errorf("README.md does not show pipelines/examples/sourcecounts/main.go from %q to its end as a go block; copy it there", "// sourceHourly")
	}
}
