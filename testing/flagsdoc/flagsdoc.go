// Package flagsdoc keeps docs/flags.md generated from the commands' flag
// sets: each command's TestFlagsDoc calls Check, which fails when the
// command's table is stale.
package flagsdoc

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/haade/haade/runners"
)

// UpdateDocsEnv, set to 1, makes Check rewrite docs/flags.md instead of
// comparing against it:
//
//	HAADE_UPDATE_DOCS=1 go test -p 1 -run '^TestFlagsDoc$' ./pipelines/...
const UpdateDocsEnv = "HAADE_UPDATE_DOCS"

// Check checks that docs/flags.md holds, between the markers
// <!-- flags NAME --> and <!-- end flags NAME -->, the Markdown table of
// fs's flags (runners.Markdown): the flags document is generated from the
// flag sets, and a test fails when it is stale.
func Check(t *testing.T, name string, fs *flag.FlagSet) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "docs", "flags.md")
	var table bytes.Buffer
	runners.Markdown(&table, fs)
	begin, end := fmt.Sprintf("<!-- flags %s -->\n", name), fmt.Sprintf("<!-- end flags %s -->\n", name)
	want := begin + table.String() + end

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	var got string
	if i >= 0 && j > i {
		got = doc[i : j+len(end)]
	}
	if got == want {
		return
	}
	if os.Getenv(UpdateDocsEnv) == "1" {
		if got == "" {
			doc += "\n## " + name + "\n\n" + want
		} else {
			doc = strings.Replace(doc, got, want, 1)
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the %s section of %s", name, path)
		return
	}
	t.Errorf("docs/flags.md is stale for %s (-doc +flags); rewrite it with %s=1 go test -p 1 -run '^TestFlagsDoc$' ./pipelines/...:\n%s",
		name, UpdateDocsEnv, cmp.Diff(got, want))
}
