package icebergio

import (
	"flag"
	"fmt"
	"strings"

	"github.com/haade/haade/internal/secret"
)

// CatalogFlags defines the catalog flags every HAADE pipeline shares
// (--catalog, --catalog-name, --catalog-uri, --warehouse, --s3-endpoint),
// with the defaults of docs/DESIGN.md, and returns a func that reads them after
// the flag set is parsed.
func CatalogFlags(fs *flag.FlagSet) func() CatalogConfig {
	typ := fs.String("catalog", "sql", "catalog type: sql or rest")
	name := fs.String("catalog-name", "local", "catalog name; Spark and pyiceberg must use the same")
	uri := fs.String("catalog-uri", "lakehouse/catalog.db", "sql: a SQLite path or a postgres:// URL; rest: an http(s):// URL")
	wh := fs.String("warehouse", "lakehouse/warehouse", "warehouse root: a local path, file://... or s3://bucket/")
	s3 := fs.String("s3-endpoint", "", "S3 endpoint such as http://minio.lakehouse:9000; credentials from AWS_* variables")
	return func() CatalogConfig {
		c := CatalogConfig{Type: *typ, Name: *name, URI: *uri, Warehouse: *wh, S3Endpoint: *s3}
		c.exportPassword()
		return c
	}
}

// CheckExistingFlags checks what CatalogFlags read for a command that reads
// or maintains the tables a pipeline made (query, maintain): each error
// names its flag (--catalog, --s3-endpoint, --warehouse, --catalog-uri, in
// that order). Last, as it looks at the file system, a SQLite catalog that
// is not there is an error that wraps ErrCatalog: such a command never
// creates a catalog, as opening one would.
func CheckExistingFlags(c CatalogConfig) error {
	if c.Type != "sql" && c.Type != "rest" {
		return fmt.Errorf("--catalog=%q: want sql or rest", c.Type)
	}
	if c.S3Endpoint != "" && !strings.HasPrefix(c.S3Endpoint, "http://") && !strings.HasPrefix(c.S3Endpoint, "https://") {
		return fmt.Errorf("--s3-endpoint=%q: want http(s)://host:port", c.S3Endpoint)
	}
	if _, err := c.WarehouseURL(); err != nil {
		return fmt.Errorf("--warehouse: %w", err)
	}
	if err := c.CheckExists(); err != nil {
		return fmt.Errorf("--catalog-uri=%s: %w", secret.RedactURI(c.URI), err)
	}
	if _, err := c.Properties(); err != nil {
		return fmt.Errorf("--catalog-uri: %w", err)
	}
	return nil
}
