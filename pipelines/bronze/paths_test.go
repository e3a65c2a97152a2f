package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathsMeanTheSameOnFlink: on Flink the default, relative catalog and
// warehouse become absolute paths of the submitting directory when the
// workers run on this machine (PROCESS), and are refused, naming the flag,
// when they run elsewhere (EXTERNAL).
func TestPathsMeanTheSameOnFlink(t *testing.T) {
	env := flag.Lookup("environment_type")
	t.Cleanup(func() { _ = env.Value.Set("") }) // Beam's flag is process-wide
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }

	cfg, err := parseArgs([]string{"--runner=flink", "--endpoint=127.0.0.1:8099", "--environment_type=PROCESS", "--brokers=k:9092"}, none)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "lakehouse", "catalog.db"); cfg.Catalog.URI != want {
		t.Errorf("PROCESS: --catalog-uri %q, want %q", cfg.Catalog.URI, want)
	}
	if want := filepath.Join(wd, "lakehouse", "warehouse"); cfg.Catalog.Warehouse != want {
		t.Errorf("PROCESS: --warehouse %q, want %q", cfg.Catalog.Warehouse, want)
	}

	_, err = parseArgs([]string{"--runner=flink", "--endpoint=127.0.0.1:8099", "--environment_type=EXTERNAL", "--brokers=k:9092", "--warehouse=s3://w/"}, none)
	if err == nil || !strings.HasPrefix(err.Error(), "--catalog-uri=lakehouse/catalog.db: a relative path") {
		t.Errorf("EXTERNAL with the default catalog: %v, want a refusal naming --catalog-uri", err)
	}

	// The demo still runs when no Kafka, catalog or warehouse flag is given.
	cfg, err = parseArgs([]string{"--runner=flink", "--endpoint=127.0.0.1:8099", "--environment_type=PROCESS"}, none)
	if err != nil || !cfg.Demo {
		t.Errorf("no deployment flag: demo %v, %v; want the demo", cfg.Demo, err)
	}
}
