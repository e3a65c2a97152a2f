package maintain

import (
	"context"
	"fmt"
	"time"

	"github.com/haade/haade/io/icebergio"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// OrphanReport is what DeleteOrphans did.
type OrphanReport struct {
	Found   int   // files under the table's location that no metadata references, older than the age
	Deleted int   // of those, deleted
	Bytes   int64 // size of the orphans found
}

// DeleteOrphans deletes the files under table ident's location that no
// snapshot, manifest or metadata file references and that are older than
// olderThan: data files of bundles whose window never committed, files of
// failed commits. olderThan must exceed the longest time a written file may
// wait for its commit (a catalog outage, a window waiting for an earlier
// one), so it may not be under MinOrphanAge.
//
// It lists the location through the table's file IO (local files, or S3
// and MinIO through gocloud).
func DeleteOrphans(ctx context.Context, cat catalog.Catalog, ident string, olderThan time.Duration) (OrphanReport, error) {
	if olderThan < MinOrphanAge {
		return OrphanReport{}, fmt.Errorf("%w: %v", ErrUnsafeOrphanAge, olderThan)
	}
	tbl, err := loadRetry(ctx, cat, ident, icebergio.Backoff{})
	if err != nil {
		return OrphanReport{}, err
	}
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(olderThan))
	if err != nil {
		return OrphanReport{}, err
	}
	return OrphanReport{Found: len(res.OrphanFileLocations), Deleted: len(res.DeletedFiles), Bytes: res.TotalSizeBytes}, nil
}
