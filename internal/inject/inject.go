// Package inject lets a test make production code fail at a named point:
// the code calls Check at the point, and a test sets what it returns with
// At. It works where the code runs in the test's own process, as Prism runs
// a job's workers in the process that submits it.
//
// It keeps test hooks out of the packages' APIs: a package that offers a
// point names it here (BeforeCommit), and only tests call At. The package
// imports nothing of the module, so the io packages can import it, and it
// is internal: nothing outside the module can set a point.
package inject

import "sync"

var points sync.Map // point name -> *hook[T]

// hook holds a point's function; its address tells one At from another.
type hook[T any] struct{ fn func(T) error }

// At makes Check(point, v) return fn(v) until remove is called. A point has
// one function at a time; a later At replaces an earlier one.
func At[T any](point string, fn func(T) error) (remove func()) {
	h := &hook[T]{fn}
	points.Store(point, h)
	return func() { points.CompareAndDelete(point, h) }
}

// Check returns the error of the function set at point for v, or nil when
// none is set (or it takes another type than T).
func Check[T any](point string, v T) error {
	f, ok := points.Load(point)
	if !ok {
		return nil
	}
	h, ok := f.(*hook[T])
	if !ok {
		return nil
	}
	return h.fn(v)
}

// BeforeCommit is the point of io/icebergio's committer of table ident,
// after a window's files are written and before its snapshot is committed,
// with the window's icebergio.FileSet: an error fails that commit without a
// retry, as a crash there would.
func BeforeCommit(ident string) string { return "icebergio.before-commit/" + ident }
