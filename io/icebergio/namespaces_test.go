package icebergio_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
)

func TestNamespaces(t *testing.T) {
	tests := []struct {
		name   string
		create []table.Identifier
		want   []table.Identifier
	}{
		{"none", nil, nil},
		{"nested, sorted", []table.Identifier{{"b"}, {"a"}, {"a", "inner"}, {"a", "inner", "deep"}},
			[]table.Identifier{{"a"}, {"a", "inner"}, {"a", "inner", "deep"}, {"b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, cat := icebergtest.Catalog(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, ns := range tc.create {
				if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
					t.Fatal(err)
				}
			}
			got, err := icebergio.Namespaces(ctx, cat)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Namespaces (-want +got):\n%s", diff)
			}
		})
	}
}
