package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

// A warehouse that cannot be written, behind a catalog that works, is the
// warehouse's fault: the one line names --warehouse, not --catalog-uri.
func TestUnwritableWarehouseNamesTheWarehouse(t *testing.T) {
	e := newEnv(t, 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--brokers=" + e.cfg.Kafka.Brokers[0], "--metrics-addr=", "--bounded",
		"--catalog-uri=" + filepath.Join(dir, "catalog.db"), "--warehouse=" + filepath.Join(file, "warehouse")}
	var out, errb cmdtest.Buffer
	if code := run(args, func(string) string { return "" }, &out, &errb); code == 0 {
		t.Fatalf("exit 0 with an unwritable warehouse; stderr %q", errb.String())
	}
	lines := nonEmptyLines(errb.String())
	if len(lines) != 1 || !strings.Contains(lines[0], "--warehouse") || strings.Contains(lines[0], "--catalog-uri") {
		t.Fatalf("stderr %q: want one line naming --warehouse and not --catalog-uri", errb.String())
	}
}
