// Package rows maps Go row structs to Iceberg tables and back: the row
// reflection that io/icebergio's writers, its snapshot reads and its scans
// share.
//
// A row type is a struct whose fields carry `iceberg` tags (see SchemaOf);
// TypeOf parses one once per process. An Appender (or, without Beam, a
// RowBuilder) turns slices of rows into Arrow record batches in a table's
// Arrow schema, moving promoted members out of the overflow column (see
// PromotedProperty). ScanTable reads a table's rows into a slice of row
// structs, and Decode and Encode convert between row slices and the Arrow
// IPC streams that snapshot reads carry. It imports no other io/icebergio
// package: the catalog, the sink and the sources build on it.
package rows
