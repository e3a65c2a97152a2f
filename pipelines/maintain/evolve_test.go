package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvolveBadFlags checks that a bad command line of `maintain evolve` is
// one line naming the flag, and exit 2.
func TestEvolveBadFlags(t *testing.T) {
	dir := t.TempDir()
	cat := "--catalog-uri=" + filepath.Join(dir, "catalog.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--promote=region:string", cat}, "--table"},
		{[]string{"--table=lakehouse.bronze_events", cat}, "--promote, --widen or --rename"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region", cat}, "--promote=region: want name:value"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region:varchar", cat}, `--promote=region:varchar: unknown type "varchar"`},
		{[]string{"--table=lakehouse.bronze_events", "--widen=amount:decimal", cat}, "--widen=amount:decimal"},
		{[]string{"--table=lakehouse.bronze_events", "--rename=a", cat}, "--rename=a"},
		{[]string{"--table=bronze", "--promote=region:string", cat}, "--table=bronze"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region:string", cat}, "--catalog-uri"}, // no such catalog
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"evolve"}, c.args...), func(string) string { return "" }, &out, &errb)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("evolve %v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errb.String(), c.want)
		}
	}
}
