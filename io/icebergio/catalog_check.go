package icebergio

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/iceberg-go/catalog"
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

// OpenExisting opens the catalog for a DoFn, on a worker. The pipeline's
// construction opened the catalog first (and created a SQLite one that did
// not exist), so a SQLite file that a worker does not find means that the
// worker looks elsewhere: a relative path opened in another working
// directory, or a file on another machine. Opening it would create an
// empty catalog beside the worker, whose tables are never found, and the
// run would retry for ever in silence; OpenExisting fails instead, with an
// error marked Permanent (Retry returns it at once) that names the path
// and the worker's directory, so the bundle, and the job, fail loudly.
func (c CatalogConfig) OpenExisting(ctx context.Context) (catalog.Catalog, error) {
	if err := c.CheckExists(); err != nil {
		wd, _ := os.Getwd()
		host, _ := os.Hostname()
		return nil, Permanent(fmt.Errorf("%w (worker on %s, in %s): the catalog the pipeline was built with is not here; give the workers a catalog they share (an absolute path on shared storage, postgres:// or a REST catalog)", err, host, wd))
	}
	return c.Open(ctx)
}
