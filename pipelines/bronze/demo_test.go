package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

// The demo runs only when asked, or when nothing says where a deployment's
// data lives. A Kafka, catalog or warehouse setting without --brokers, by
// flag or by HAADE_* variable, is one line naming --brokers, exit 2, and
// nothing written: not the catalog, not the warehouse, not ./lakehouse.
func TestNoDemoInADeployment(t *testing.T) {
	// The demo's default paths are relative (./lakehouse): the runs below
	// start in an empty directory, so anything they write there shows.
	cwd := t.TempDir()
	t.Chdir(cwd)
	cases := []struct {
		name string
		args func(dir string) []string
		env  func(dir string) map[string]string
	}{
		{"catalog URI flag", func(dir string) []string { return []string{"--catalog-uri=" + filepath.Join(dir, "catalog.db")} }, nil},
		{"PostgreSQL catalog from the environment", nil, func(string) map[string]string {
			return map[string]string{"HAADE_CATALOG_URI": "postgres://haade:s3cret@127.0.0.1:1/lakehouse"}
		}},
		{"catalog URI from the environment, brokers empty", nil, func(dir string) map[string]string {
			return map[string]string{"HAADE_CATALOG_URI": filepath.Join(dir, "catalog.db"), "HAADE_BROKERS": ""}
		}},
		{"warehouse from the environment", nil, func(dir string) map[string]string {
			return map[string]string{"HAADE_WAREHOUSE": filepath.Join(dir, "warehouse")}
		}},
		{"topic flag", func(string) []string { return []string{"--topic=payments"} }, nil},
		{"empty brokers flag", func(string) []string { return []string{"--brokers="} }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--metrics-addr="}
			if tc.args != nil {
				args = append(args, tc.args(dir)...)
			}
			env := map[string]string{}
			if tc.env != nil {
				env = tc.env(dir)
			}
			var out, errb cmdtest.Buffer
			code := run(args, func(k string) string { return env[k] }, &out, &errb)
			lines := nonEmptyLines(errb.String())
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--brokers") {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line naming --brokers", code, errb.String())
			}
			if strings.Contains(errb.String(), "s3cret") {
				t.Errorf("stderr %q shows the catalog's password", errb.String())
			}
			if out.String() != "" {
				t.Errorf("stdout %q: want nothing (no demo)", out.String())
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("the run wrote %v into %s", left, dir)
			}
			if left, _ := os.ReadDir(cwd); len(left) > 0 {
				t.Errorf("the run wrote %v into its working directory", left)
			}
		})
	}

	// --demo with --brokers contradicts itself: one line naming --demo.
	var out, errb cmdtest.Buffer
	code := run([]string{"--demo", "--brokers=127.0.0.1:1", "--metrics-addr="}, func(string) string { return "" }, &out, &errb)
	if lines := nonEmptyLines(errb.String()); code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--demo") {
		t.Errorf("--demo with --brokers: exit %d, stderr %q; want exit 2 and one line naming --demo", code, errb.String())
	}
}
