package icebergtest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/s3io"
	"github.com/minio/minio-go/v7"
)

// Purge drops tables kept on S3 (MinIO at s3Endpoint, credentials from the
// AWS_* environment) with every object under their locations, which
// registered copies share: it finds every location first, then removes the
// objects, then the catalog entries. It goes on after an error and returns
// them all.
func Purge(ctx context.Context, cat catalog.Catalog, s3Endpoint string, idents ...string) error {
	cl, err := s3io.NewClient(s3io.ConfigFromEnv(s3Endpoint))
	if err != nil {
		return err
	}
	var errs []error
	locs := map[string]bool{}
	for _, ident := range idents {
		id, err := icebergio.Identifier(ident)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if tbl, err := cat.LoadTable(ctx, id); err == nil {
			locs[tbl.Location()] = true
		}
	}
	for loc := range locs {
		bucket, prefix, _ := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
		objs := cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: strings.TrimSuffix(prefix, "/") + "/", Recursive: true})
		for rerr := range cl.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{}) {
			errs = append(errs, fmt.Errorf("remove %s: %w", rerr.ObjectName, rerr.Err))
		}
	}
	for _, ident := range idents {
		id, err := icebergio.Identifier(ident)
		if err != nil {
			continue
		}
		if err := cat.DropTable(ctx, id); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			errs = append(errs, fmt.Errorf("drop %s: %w", ident, err))
		}
	}
	return errors.Join(errs...)
}
