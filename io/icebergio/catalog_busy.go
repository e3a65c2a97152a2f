package icebergio

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/internal/secret"
)

// CatalogBusyWait is how long Open keeps trying a SQLite catalog that
// another process holds locked (SQLITE_BUSY: another pipeline committing, a
// sqlite3 shell inside a transaction, a backup) before it gives up with
// ErrCatalogBusy. Default 1 minute. Each try itself waits up to SQLite's
// busy timeout (10 s).
var CatalogBusyWait = time.Minute

// sqliteBusyTimeout is SQLite's own busy_timeout for catalog connections.
var sqliteBusyTimeout = 10 * time.Second

// loadWaitingWhileBusy is catalog.Load, tried again while the catalog is
// busy, for up to CatalogBusyWait; any other error returns at once. A busy
// catalog is not a bad configuration: it says so, waits and retries.
func loadWaitingWhileBusy(ctx context.Context, name string, props iceberg.Properties, uri string) (catalog.Catalog, error) {
	started := time.Now()
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		cat, err := catalog.Load(ctx, name, props)
		if err == nil || !isBusy(err) {
			return cat, err
		}
		waited := time.Since(started)
		if waited >= CatalogBusyWait || ctx.Err() != nil {
			return nil, fmt.Errorf("%w: the SQLite catalog %s is busy: another process holds it locked (SQLITE_BUSY); waited %v over %d tries: %v",
				ErrCatalogBusy, secret.RedactURI(uri), waited.Round(time.Second), attempt, err)
		}
		slog.Warn("catalog busy: another process holds it locked; retrying", "catalog", secret.RedactURI(uri),
			"attempt", attempt, "waited", waited.Round(time.Millisecond))
		select {
		case <-ctx.Done():
		case <-time.After(jitter(wait)):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
