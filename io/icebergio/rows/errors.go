package rows

import "errors"

// Errors returned by this package. io/icebergio returns the same values
// (icebergio.ErrRowType is ErrRowType), so errors.Is works with either.
var (
	// ErrRowType is returned when a Go row type cannot be mapped to a table:
	// an untagged struct, an unsupported field type, a bad tag.
	ErrRowType = errors.New("icebergio: bad row type")

	// ErrIncompatibleSchema is returned when a table's schema (or a file's)
	// cannot take, or be read into, a row type.
	ErrIncompatibleSchema = errors.New("icebergio: table schema is incompatible")
)
