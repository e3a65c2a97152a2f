package icebergio

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/driver/sqliteshim"
)

// lockCatalog holds an exclusive lock on a SQLite file that is not yet in
// WAL mode, as another process would; the returned func releases it.
func lockCatalog(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open(sqliteshim.ShimName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
	}
}

func shortBusyWaits(t *testing.T, wait time.Duration) {
	oldWait, oldTimeout := CatalogBusyWait, sqliteBusyTimeout
	CatalogBusyWait, sqliteBusyTimeout = wait, 300*time.Millisecond
	t.Cleanup(func() { CatalogBusyWait, sqliteBusyTimeout = oldWait, oldTimeout })
}

// A catalog that another process holds for longer than SQLite's own busy
// timeout: Open waits and retries, and succeeds once the lock is released.
func TestBusyCatalogIsRetried(t *testing.T) {
	shortBusyWaits(t, 20*time.Second)
	dir := t.TempDir()
	cfg := CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	release := lockCatalog(t, filepath.Join(dir, "catalog.db"))
	time.AfterFunc(2*time.Second, release)
	start := time.Now()
	if err := cfg.Check(context.Background()); err != nil {
		t.Fatalf("Check of a catalog busy for 2 s: %v", err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("Check returned after %v, while the catalog was still locked", took)
	}
}

// A catalog busy for longer than CatalogBusyWait: ErrCatalogBusy (an
// ErrCatalog), saying that another process holds it.
func TestBusyCatalogSaysSo(t *testing.T) {
	shortBusyWaits(t, 1500*time.Millisecond)
	dir := t.TempDir()
	cfg := CatalogConfig{URI: filepath.Join(dir, "catalog.db"), Warehouse: filepath.Join(dir, "warehouse")}
	defer lockCatalog(t, filepath.Join(dir, "catalog.db"))()
	err := cfg.Check(context.Background())
	if !errors.Is(err, ErrCatalogBusy) || !errors.Is(err, ErrCatalog) {
		t.Fatalf("err = %v, want ErrCatalogBusy", err)
	}
	for _, want := range []string{"busy", "another process", "catalog.db"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
