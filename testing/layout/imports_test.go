package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsGrouped checks the house's import blocks: the standard
// library first, then the modules, each group sorted (gofmt sorts within
// a group, and a standard package among the modules' is a group gofmt
// cannot see).
func TestImportsGrouped(t *testing.T) {
	goFiles(t, func(path, rel string) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		module := false
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if std && module {
				t.Errorf("%s:%d: %q after a module's import: the standard library's imports come first, in a group of their own", rel, fset.Position(im.Pos()).Line, p)
				break
			}
			module = module || !std
		}
	})
}

// goFiles calls fn with every .go file of the module (its path, and its
// path from the module's root with slashes), leaving out hidden folders,
// testdata, vendor and node_modules.
func goFiles(t *testing.T, fn func(path, rel string)) {
	t.Helper()
	const root = "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			fn(path, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
