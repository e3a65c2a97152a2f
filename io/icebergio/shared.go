package icebergio

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// This file exports the helpers that io/icebergio/snapshots and
// io/icebergio/maintain share with the sink, so that each lives once.

// SourceTopic is the "topic" under which a pipeline that reads table ident
// records its progress: the offsets of an Iceberg source are snapshot
// sequence numbers, in the same summary key as Kafka offsets.
func SourceTopic(ident string) string { return "iceberg:" + ident }

// LoadTable loads table ident of cat. A malformed identifier is a permanent
// error for Retry; a failed load wraps ErrCatalog.
func LoadTable(ctx context.Context, cat catalog.Catalog, ident string) (*table.Table, error) {
	return loadTable(ctx, cat, ident)
}

// CloseCatalog closes cat when its implementation holds resources (the SQL
// catalog's database handle).
func CloseCatalog(cat catalog.Catalog) { closeCatalog(cat) }

// Retry calls fn until it succeeds, fn says the error is permanent (by
// returning it wrapped with Permanent), or ctx ends, waiting as b says
// between tries (a zero Backoff: 100ms doubling to 30s). Each retry is
// logged and counted in haade_retries_total under table and op.
func Retry(ctx context.Context, b Backoff, op, table string, fn func() error) error {
	return retry(ctx, b, op, table, fn)
}

// Permanent marks err as not worth retrying: Retry returns it at once.
func Permanent(err error) error { return permanent(err) }
