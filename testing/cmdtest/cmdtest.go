// Package cmdtest helps tests and tools that run HAADE's commands as
// processes of their own: it builds them, and collects their output.
package cmdtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Build runs go build for each package path (as go build takes it, relative
// to the working directory unless absolute or a module path) and puts the
// binary in dir under the package's last element. It returns the binaries'
// paths in the order of pkgs.
func Build(dir string, pkgs ...string) ([]string, error) {
	var bins []string
	for _, p := range pkgs {
		bin := filepath.Join(dir, filepath.Base(p))
		if out, err := exec.Command("go", "build", "-o", bin, p).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", p, err, out)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

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
