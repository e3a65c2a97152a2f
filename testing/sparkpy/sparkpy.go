// Package sparkpy runs the tiers' Python readers: a script under the
// repository, in the venv of testing/services/python.sh, with Spark's
// Iceberg jars, writing its answer as JSON to a file.
package sparkpy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

var (
	jarsOnce sync.Once
	jars     string
	jarsErr  error
)

// Run runs the Python script at script (relative to the repository's
// root) with "--jars JARS --out OUT" and args, OUT a file in dir named for
// the script, and returns what the script wrote there. A failure fails t
// with the end of the script's output.
func Run(t testing.TB, dir, script string, args ...string) []byte {
	t.Helper()
	root := cmdtest.MustRepoRoot(t)
	python := filepath.Join(root, "testing/services/python.sh")
	jarsOnce.Do(func() {
		var out []byte
		out, jarsErr = exec.Command("bash", python, "spark-jars").Output()
		jars = strings.TrimSpace(string(out))
	})
	if jarsErr != nil {
		t.Fatalf("python.sh spark-jars: %v", jarsErr)
	}
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(script), ".py")+".json")
	_ = os.Remove(out)
	cmd := exec.Command("bash", append([]string{python, "python", filepath.Join(root, script), "--jars", jars, "--out", out}, args...)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, cmdtest.Tail(log.String(), 60))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s ran in %v", script, time.Since(start).Round(100*time.Millisecond))
	return b
}
