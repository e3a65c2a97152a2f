package icebergio

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest"  // registers "rest"
	_ "github.com/apache/iceberg-go/catalog/sql"   // registers "sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// file IO
	"github.com/haade/haade/internal/secret"
	_ "github.com/uptrace/bun/driver/pgdriver"   // "pg" driver for postgres:// catalogs
	_ "github.com/uptrace/bun/driver/sqliteshim" // pure-Go SQLite
)

// CatalogConfig says where the tables live. It is serialised into DoFns,
// so every field is plain data.
type CatalogConfig struct {
	// Type is "sql" or "rest". Default "sql".
	Type string
	// Name is the catalog name stored in every catalog row; Spark and
	// pyiceberg must use the same one. Default "local".
	Name string
	// URI is, for sql, a SQLite path or a postgres:// URL; for rest, an
	// http(s):// URL. Default "lakehouse/catalog.db".
	URI string
	// Warehouse is the root of table locations: a local path, file://... or
	// s3://bucket/. Default "lakehouse/warehouse".
	Warehouse string
	// S3Endpoint, e.g. http://127.0.0.1:9000, turns on path-style S3.
	// Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	S3Endpoint string
	// Props are extra catalog properties, passed through as they are.
	Props map[string]string
}

func (c CatalogConfig) withDefaults() CatalogConfig {
	if c.Type == "" {
		c.Type = "sql"
	}
	if c.Name == "" {
		c.Name = "local"
	}
	if c.URI == "" && c.Type == "sql" {
		c.URI = "lakehouse/catalog.db"
	}
	if c.Warehouse == "" {
		c.Warehouse = "lakehouse/warehouse"
	}
	return c
}

// WarehouseURL returns the warehouse as a URL: local paths become absolute
// file:// URLs.
func (c CatalogConfig) WarehouseURL() (string, error) {
	w := c.withDefaults().Warehouse
	if strings.Contains(w, "://") {
		u, err := url.Parse(w)
		if err != nil || u.Scheme == "" {
			return "", fmt.Errorf("warehouse %q is not a URL: %v", w, err)
		}
		switch u.Scheme {
		case "file", "s3", "s3a", "gs", "abfs", "abfss":
			return w, nil
		}
		return "", fmt.Errorf("warehouse %q: unsupported scheme %q (use file:// or s3://)", w, u.Scheme)
	}
	abs, err := filepath.Abs(w)
	if err != nil {
		return "", err
	}
	return "file://" + abs, nil
}

// Properties returns the iceberg-go catalog properties for this config.
func (c CatalogConfig) Properties() (iceberg.Properties, error) {
	c = c.withDefaults()
	wh, err := c.WarehouseURL()
	if err != nil {
		return nil, err
	}
	p := iceberg.Properties{"type": c.Type, "warehouse": wh}
	switch c.Type {
	case "sql":
		switch {
		case strings.HasPrefix(c.URI, "postgres://"), strings.HasPrefix(c.URI, "postgresql://"):
			if _, err := url.Parse(c.URI); err != nil {
				// url.Error repeats the URI, password and all: say only why.
				var ue *url.Error
				if errors.As(err, &ue) {
					err = ue.Err
				}
				return nil, fmt.Errorf("catalog uri: not a valid URL: %v", err)
			}
			p["uri"] = c.URI
			p["sql.driver"] = "pg"
			p["sql.dialect"] = "postgres"
		case strings.Contains(c.URI, "://") && !strings.HasPrefix(c.URI, "file:"):
			return nil, fmt.Errorf("catalog uri %q: want a SQLite path or a postgres:// URL", c.URI)
		default:
			path := strings.TrimPrefix(strings.TrimPrefix(c.URI, "file://"), "file:")
			if i := strings.IndexByte(path, '?'); i >= 0 {
				path = path[:i]
			}
			p["uri"] = "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")"
			p["sql.driver"] = "sqliteshim"
			p["sql.dialect"] = "sqlite"
		}
		p["init_catalog_tables"] = "true"
	case "rest":
		u, err := url.Parse(c.URI)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("catalog uri %q: a rest catalog needs an http(s):// URL", c.URI)
		}
		p["uri"] = c.URI
	default:
		return nil, fmt.Errorf("catalog type %q: want sql or rest", c.Type)
	}
	if c.S3Endpoint != "" {
		p["s3.endpoint"] = c.S3Endpoint
		p["s3.force-virtual-addressing"] = "false"
		region := os.Getenv("AWS_REGION")
		if region == "" {
			region = "us-east-1"
		}
		p["s3.region"] = region
		if v := os.Getenv("AWS_ACCESS_KEY_ID"); v != "" {
			p["s3.access-key-id"] = v
		}
		if v := os.Getenv("AWS_SECRET_ACCESS_KEY"); v != "" {
			p["s3.secret-access-key"] = v
		}
	}
	for k, v := range c.Props {
		p[k] = v
	}
	return p, nil
}

// Open loads the catalog. A password in URI is exported for the workers of
// this process (see secrets.go): the stages that read or write the catalog
// open it while the pipeline is built, and their DoFns carry no password.
func (c CatalogConfig) Open(ctx context.Context) (catalog.Catalog, error) {
	c.exportPassword()
	c = c.withPassword()
	props, err := c.Properties()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	// A SQLite catalog's directory is made here, when the catalog opens,
	// not when a configuration is validated: a run refused for its flags
	// writes nothing.
	if path, ok := sqlitePath(props); ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("%w: catalog uri %q: %v", ErrCatalog, c.URI, err)
		}
	}
	cat, err := loadWaitingWhileBusy(ctx, c.withDefaults().Name, props, c.URI)
	if err != nil {
		if isBusy(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: open %s catalog %q: %v", ErrCatalog, c.withDefaults().Type, secret.RedactURI(c.URI), err)
	}
	return cat, nil
}

// sqlitePath is the file of a SQLite catalog's properties.
func sqlitePath(p iceberg.Properties) (string, bool) {
	if p["sql.dialect"] != "sqlite" {
		return "", false
	}
	path := strings.TrimPrefix(p["uri"], "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path, true
}

// Check opens the catalog and closes it again: a catalog that cannot be
// reached fails here, with ErrCatalog, before anything else is tried.
func (c CatalogConfig) Check(ctx context.Context) error {
	cat, err := c.Open(ctx)
	if err != nil {
		return err
	}
	CloseCatalog(cat)
	return nil
}

// CloseCatalog closes cat when its implementation holds resources (the SQL
// catalog's database handle).
func CloseCatalog(cat catalog.Catalog) {
	if c, ok := cat.(catalog.Closer); ok {
		_ = c.Close()
	}
}
