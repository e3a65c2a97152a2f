package icebergio_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
)

func TestCheckExistingFlags(t *testing.T) {
	cfg, _ := icebergtest.Catalog(t)
	cfg.Type = "sql" // as CatalogFlags sets it
	missing := cfg
	missing.URI = filepath.Join(t.TempDir(), "none.db")
	with := func(f func(*icebergio.CatalogConfig)) icebergio.CatalogConfig {
		c := cfg
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		cfg     icebergio.CatalogConfig
		want    string // "" for no error
		catalog bool   // the error wraps ErrCatalog
	}{
		{"ok", cfg, "", false},
		{"type", with(func(c *icebergio.CatalogConfig) { c.Type = "hive" }), `--catalog="hive"`, false},
		{"s3 endpoint", with(func(c *icebergio.CatalogConfig) { c.S3Endpoint = "minio:9000" }), "--s3-endpoint", false},
		{"warehouse", with(func(c *icebergio.CatalogConfig) { c.Warehouse = "ftp://host/w" }), "--warehouse", false},
		{"no catalog", missing, "--catalog-uri=" + missing.URI, true},
		{"rest uri", with(func(c *icebergio.CatalogConfig) { c.Type, c.URI = "rest", "ftp://rest" }), "--catalog-uri", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := icebergio.CheckExistingFlags(tc.cfg)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckExistingFlags: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("CheckExistingFlags: %v, want an error that starts with %q", err, tc.want)
			}
			if errors.Is(err, icebergio.ErrCatalog) != tc.catalog {
				t.Errorf("errors.Is(%v, ErrCatalog) = %v, want %v", err, !tc.catalog, tc.catalog)
			}
		})
	}
}
