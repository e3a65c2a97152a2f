package icebergio

import (
	"fmt"
	"os"
	"strings"
)

// CheckExists fails when the catalog is a SQLite file that does not exist.
// Opening such a catalog would create an empty one: right for a pipeline
// that writes, wrong for a tool that only reads or maintains tables.
func (c CatalogConfig) CheckExists() error {
	c = c.withDefaults()
	if c.Type != "sql" || strings.Contains(c.URI, "://") && !strings.HasPrefix(c.URI, "file:") {
		return nil
	}
	path := strings.TrimPrefix(strings.TrimPrefix(c.URI, "file://"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: no SQLite catalog at %s: %v", ErrCatalog, path, err)
	}
	return nil
}
