package icebergio

import "flag"

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
