package icebergio

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Namespaces lists every namespace of cat, nested ones included, sorted by
// their dotted names. A SQL catalog lists every level at once, a REST one
// one level at a time, so each namespace's children are asked for too; a
// namespace whose children cannot be listed counts as having none. Only
// the top level failing is an error, wrapping ErrCatalog.
func Namespaces(ctx context.Context, cat catalog.Catalog) ([]table.Identifier, error) {
	queue, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: list namespaces: %w", ErrCatalog, err)
	}
	seen := map[string]bool{}
	var out []table.Identifier
	for len(queue) > 0 {
		ns := queue[0]
		queue = queue[1:]
		key := strings.Join(ns, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ns)
		if children, err := cat.ListNamespaces(ctx, ns); err == nil {
			for _, c := range children {
				if len(c) > len(ns) {
					queue = append(queue, c)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out, nil
}
