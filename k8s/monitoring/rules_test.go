package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAlertRules runs `promtool test rules` on the rule groups of the two PrometheusRules
// (haade-alerts, haade-flink-alerts) against the recorded series in
// testdata/rules-test.promtool (YAML, not named .yaml so that the manifest checks of k8s/
// skip it): HaadeNoCommit fires on a stale gauge and on an absent one, and the Flink alerts
// fire on restarts, failed checkpoints and a job that is gone, and stay quiet on a healthy
// job.
//
// promtool is Prometheus's own rule tester; promtool.sh builds it into $HAADE_CACHE (CI's
// .ci/flink does). Without it the test is skipped, saying how to get it. HAADE_PROMTOOL
// names another binary.
func TestAlertRules(t *testing.T) {
	promtool := os.Getenv("HAADE_PROMTOOL")
	if promtool == "" {
		cache := os.Getenv("HAADE_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "haade")
		}
		promtool = filepath.Join(cache, "promtool", "v0.303.0", "promtool")
	}
	if _, err := os.Stat(promtool); err != nil {
		t.Skipf("promtool not built (%v): run k8s/monitoring/promtool.sh, or set HAADE_PROMTOOL", err)
	}
	dir := t.TempDir()
	out, err := RuleGroups(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "haade-rules.yaml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	test, err := os.ReadFile(filepath.Join("testdata", "rules-test.promtool"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), test, 0o644); err != nil {
		t.Fatal(err)
	}
	// promtool check rules first: a rule that does not parse fails here with its own message.
	for _, args := range [][]string{{"check", "rules", "haade-rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %v: %v\n%s", args, err, b)
		}
		t.Logf("promtool %v:\n%s", args, b)
	}
}
