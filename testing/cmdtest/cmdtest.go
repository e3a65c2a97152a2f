// Package cmdtest helps tests and tools that run HAADE's commands and
// service scripts as processes of their own: it finds the repository,
// builds the commands, runs the scripts of testing/services, and collects
// and shortens their output.
package cmdtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/modfile"
)

// Module is the path of HAADE's Go module.
const Module = "github.com/haade/haade"

// RepoRoot returns the repository's top directory: the nearest directory
// at or above the working directory whose go.mod declares Module. A test's
// working directory is its package's, so every test and every tool run
// from inside the repository finds it.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(b) == Module {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("not inside the HAADE repository: no go.mod of %s at or above %s", Module, wd)
		}
	}
}

// MustRepoRoot is RepoRoot for a test: it fails t when there is no
// repository above the working directory.
func MustRepoRoot(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Builder builds commands with go build. The zero Builder runs plain
// go build; Build is the zero Builder's Build.
type Builder struct {
	// Flags go to go build before -o (e.g. -trimpath, -ldflags=-w).
	Flags []string
	// Env is added to this process's environment (e.g. CGO_ENABLED=0).
	Env []string
	// Nice, when above zero, runs go build under nice -n Nice, so that a
	// build inside a test leaves the cores to the servers it measures.
	Nice int
}

// Build runs go build for each package path (as go build takes it, relative
// to the working directory unless absolute or a module path) and puts the
// binary in dir under the package's last element. It returns the binaries'
// paths in the order of pkgs.
func (b Builder) Build(dir string, pkgs ...string) ([]string, error) {
	var bins []string
	for _, p := range pkgs {
		bin := filepath.Join(dir, filepath.Base(p))
		args := append(append([]string{"build"}, b.Flags...), "-o", bin, p)
		cmd := exec.Command("go", args...)
		if b.Nice > 0 {
			cmd = exec.Command("nice", append([]string{"-n", strconv.Itoa(b.Nice), "go"}, args...)...)
		}
		if len(b.Env) > 0 {
			cmd.Env = append(os.Environ(), b.Env...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", p, err, out)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

// Static is the build the Dockerfile runs: static linux binaries without
// cgo, with -trimpath, and without DWARF (-ldflags=-w). Flink's workers run
// such a binary. Every build of this kind shares its compiled packages in
// the Go build cache with the others and with the image's build
// (testing/cluster/images.sh gives podman's build this machine's cache),
// where builds that differ in one flag compile the whole dependency tree
// again (minutes on two cores).
var Static = Builder{Flags: []string{"-trimpath", "-ldflags=-w"}, Env: []string{"CGO_ENABLED=0"}}

// Build is Builder{}.Build: plain go build of each package into dir.
func Build(dir string, pkgs ...string) ([]string, error) { return Builder{}.Build(dir, pkgs...) }

// BuildTemp is Build into a new temporary directory, for a TestMain: it
// exits the process with the build's error if one fails. done removes the
// directory.
func BuildTemp(pkgs ...string) (bins []string, done func()) {
	dir, err := os.MkdirTemp("", "haade-cmdtest-")
	if err == nil {
		bins, err = Build(dir, pkgs...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	return bins, func() { os.RemoveAll(dir) }
}

// Script runs testing/services/NAME.sh of the repository at root with
// args, in root, with env added to this process's environment, and
// returns its combined output. Its error names the script and its
// arguments and holds the output.
func Script(root string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "testing/services", name+".sh")}, args...)...)
	cmd.Dir = root
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("testing/services/%s.sh %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// maxLine is the longest a line of a tail is; longer ones are cut, so
// that one line of a JSON log does not fill a failure.
const maxLine = 600

// Tail returns the last n lines of text, for a failure's message: each
// longer than 600 bytes is cut there, with "..." after it.
func Tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		if len(l) > maxLine {
			lines[i] = strings.ToValidUTF8(l[:maxLine], "") + "..."
		}
	}
	return strings.Join(lines, "\n")
}

// TailFile is Tail of the file at path (a process's log); when the file
// cannot be read, it is the error.
func TailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return Tail(string(b), n)
}

// Buffer is a bytes.Buffer that a process's stdout and stderr copiers may
// write while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
