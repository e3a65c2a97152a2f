package icebergio

import (
	"errors"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
)

// ErrUnbounded is returned (as a construction panic) by OverwriteDays for
// an unbounded input: it groups every row into one overwrite, which an
// unbounded input would never complete.
var ErrUnbounded = errors.New("icebergio: input is unbounded")

// isUnbounded reports whether pc is unbounded. Beam's Go SDK does not
// export a PCollection's boundedness; its graph node does
// (graph.Node.Bounded), so it is read from there. When the SDK's layout
// changes and the node cannot be reached, pc counts as bounded and
// TestOverwriteDaysRefusesUnbounded fails.
func isUnbounded(pc beam.PCollection) bool {
	v := reflect.ValueOf(pc)
	if v.Kind() != reflect.Struct || v.NumField() != 1 {
		return false
	}
	f := v.Field(0)
	if f.Type() != reflect.TypeOf((*graph.Node)(nil)) || f.IsNil() {
		return false
	}
	return !(*graph.Node)(f.UnsafePointer()).Bounded()
}
