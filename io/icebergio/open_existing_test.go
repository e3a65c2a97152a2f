package icebergio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenExistingFailsLoudly: a worker whose SQLite catalog is not where
// the pipeline was built (a relative path in another directory) fails at
// once, naming the path, and creates no empty catalog; one that is there
// opens.
func TestOpenExistingFailsLoudly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := CatalogConfig{URI: filepath.Join(dir, "elsewhere", "catalog.db"), Warehouse: filepath.Join(dir, "wh")}
	start := time.Now()
	err := Retry(ctx, Backoff{}, "open catalog", "t", func() error {
		cat, err := missing.OpenExisting(ctx)
		if err == nil {
			CloseCatalog(cat)
		}
		return err
	})
	if !errors.Is(err, ErrCatalog) || !strings.Contains(err.Error(), missing.URI) || !strings.Contains(err.Error(), "worker on ") {
		t.Fatalf("OpenExisting of a missing SQLite catalog: %v; want ErrCatalog naming the path and the worker", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Retry took %v: the error is not permanent", d)
	}
	if _, err := os.Stat(filepath.Dir(missing.URI)); !os.IsNotExist(err) {
		t.Errorf("OpenExisting made %s (%v): it must create nothing", filepath.Dir(missing.URI), err)
	}

	there := CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "wh")}
	if err := there.Check(ctx); err != nil { // what the pipeline's construction does
		t.Fatal(err)
	}
	cat, err := there.OpenExisting(ctx)
	if err != nil {
		t.Fatalf("OpenExisting of an existing catalog: %v", err)
	}
	CloseCatalog(cat)
}
