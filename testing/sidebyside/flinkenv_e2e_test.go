//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

// flinkRoot returns the repository's root for a test of the Flink
// contenders, and skips the test unless the standalone Flink 1.19 cluster
// is installed (testing/services/flinkcluster.sh install), with native
// also Iceberg's Flink jars (flinknative.sh install), and java is on PATH.
// .ci/flinksbs installs them and fails on a skip.
func flinkRoot(t *testing.T, native bool) string {
	t.Helper()
	cache := os.Getenv("HAADE_CACHE")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache/haade")
	}
	for _, f := range []string{"flink/dist-1.19.0/.complete", "flink/beam-2.62.0-flink-1.19.0/.complete", "flink/beam-boot-2.77.0"} {
		if _, err := os.Stat(filepath.Join(cache, f)); err != nil {
			t.Skipf("Flink is not installed (no %s): run testing/services/flinkcluster.sh install", filepath.Join(cache, f))
		}
	}
	root, err := cmdtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if native {
		if err := exec.Command("bash", filepath.Join(root, "testing/services/flinknative.sh"), "status").Run(); err != nil {
			t.Skip("Iceberg's Flink jars are not installed: run testing/services/flinknative.sh install")
		}
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH: the Flink cluster needs Java 11 or 17")
	}
	return root
}
