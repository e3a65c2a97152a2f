package tables

import (
	"reflect"
	"strings"
	"testing"
)

// Every partition column is a required column of the row type, so a
// table can always be partitioned as declared.
func TestPartitionColumnsAreRequiredColumns(t *testing.T) {
	for _, tb := range []Table{Bronze, DeadLetters, Silver, SilverRejects, GoldSourceDaily, GoldTrendingTerms} {
		t.Run(tb.Ident, func(t *testing.T) {
			if strings.Count(tb.Ident, ".") != 1 {
				t.Errorf("identifier %q: want namespace.table", tb.Ident)
			}
			rt := reflect.TypeOf(tb.Row)
			for _, p := range tb.Partition {
				found := false
				for i := 0; i < rt.NumField(); i++ {
					tag := strings.Split(rt.Field(i).Tag.Get("iceberg"), ",")
					if tag[0] == p.Column {
						found = true
						if !strings.Contains(rt.Field(i).Tag.Get("iceberg"), ",required") {
							t.Errorf("partition column %s of %v is not required", p.Column, rt)
						}
					}
				}
				if !found {
					t.Errorf("partition column %s is not a column of %v", p.Column, rt)
				}
			}
		})
	}
}

func TestAs(t *testing.T) {
	if got := Bronze.As("dev.b").Ident; got != "dev.b" {
		t.Errorf("As(dev.b).Ident = %q", got)
	}
	if got := Bronze.As("").Ident; got != "lakehouse.bronze_events" {
		t.Errorf(`As("").Ident = %q, want the default`, got)
	}
	if Bronze.Ident != "lakehouse.bronze_events" {
		t.Errorf("As changed the package's value: %q", Bronze.Ident)
	}
}
