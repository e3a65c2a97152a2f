package main

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
)

// silverRegion reads silver's promoted column back.
type silverRegion struct {
	Title  string  `iceberg:"title,required"`
	Region *string `iceberg:"region"`
	Extra  *string `iceberg:"extra"`
}

// TestSilverFollowsPromotion promotes region in bronze between two bronze
// runs: silver adds the same column to its own table and fills it, for the
// rows bronze wrote into the column and for those it still had in extra.
func TestSilverFollowsPromotion(t *testing.T) {
	l := newLake(t)
	withRegion := func(title, region string) string {
		return fmt.Sprintf(`{"source": "s", "title": %q, "timestamp": %q, "region": %q, "n": 1}`, title, ts1, region)
	}
	l.bronze(withRegion("before", "eu"))
	ctx := context.Background()
	cat, err := l.catalog.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if c, ok := cat.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}()
	if _, err := icebergio.Evolve(ctx, cat, "lakehouse.bronze_events", icebergio.Change{
		Promote: []icebergio.Promotion{{Column: "region", Type: iceberg.PrimitiveTypes.String}}}); err != nil {
		t.Fatal(err)
	}
	l.bronze(withRegion("after", "us"))
	l.silver()

	var rows []silverRegion
	if err := icebergio.ScanRows(ctx, l.catalog, "lakehouse.silver_events", &rows); err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Title < rows[j].Title })
	eu, us, rest := "eu", "us", `{"n":1}`
	want := []silverRegion{{Title: "after", Region: &us, Extra: &rest}, {Title: "before", Region: &eu, Extra: &rest}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("silver rows (-want +got):\n%s", diff)
	}
}
