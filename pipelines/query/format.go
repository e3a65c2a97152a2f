package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// null is how a null cell prints.
const null = "NULL"

// cell formats row i of column a for the terminal: timestamps in RFC 3339
// UTC, binary quoted with Go escapes, strings with control characters
// escaped, nested values as JSON.
func cell(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return null
	}
	switch c := a.(type) {
	case *array.String:
		return escape(c.Value(i))
	case *array.LargeString:
		return escape(c.Value(i))
	case *array.StringView:
		return escape(c.Value(i))
	case *array.Binary:
		return strconv.Quote(string(c.Value(i)))
	case *array.LargeBinary:
		return strconv.Quote(string(c.Value(i)))
	case *array.BinaryView:
		return strconv.Quote(string(c.Value(i)))
	case *array.FixedSizeBinary:
		return strconv.Quote(string(c.Value(i)))
	case *array.Timestamp:
		typ := c.DataType().(*arrow.TimestampType)
		t := c.Value(i).ToTime(typ.Unit)
		if typ.TimeZone == "" {
			return t.UTC().Format("2006-01-02T15:04:05.999999999") // no zone: a wall-clock time
		}
		return t.UTC().Format(time.RFC3339Nano)
	case *array.Date32:
		return c.Value(i).ToTime().Format(time.DateOnly)
	case *array.Date64:
		return c.Value(i).ToTime().UTC().Format(time.DateOnly)
	case *array.Time64:
		return c.Value(i).ToTime(c.DataType().(*arrow.Time64Type).Unit).Format("15:04:05.999999")
	case *array.Boolean, *array.Int8, *array.Int16, *array.Int32, *array.Int64, *array.Uint8, *array.Uint16,
		*array.Uint32, *array.Uint64, *array.Float16, *array.Float32, *array.Float64, *array.Decimal128, *array.Decimal256:
		return a.ValueStr(i)
	}
	if b, err := json.Marshal(a.GetOneForMarshal(i)); err == nil {
		return escape(string(b))
	}
	return escape(a.ValueStr(i))
}

// escape makes s one printable line: control and non-printable characters
// and invalid UTF-8 become Go escapes, as in a quoted string, unquoted.
func escape(s string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// truncate cuts s to width characters, the last one an ellipsis.
func truncate(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// writeTable writes rows (the first is the header) as columns aligned on
// character counts (text/tabwriter, two spaces between columns), cells cut
// to width (0: no limit), the header underlined, no trailing blanks. Cells
// hold no tab: escape made them printable.
func writeTable(w io.Writer, rows [][]string, width int) error {
	if len(rows) == 0 {
		return nil
	}
	widths := make([]int, len(rows[0]))
	for r := range rows {
		for c := range rows[r] {
			rows[r][c] = truncate(rows[r][c], width)
			widths[c] = max(widths[c], utf8.RuneCountInString(rows[r][c]))
		}
	}
	rule := make([]string, len(widths))
	for c, n := range widths {
		rule[c] = strings.Repeat("-", n)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range append([][]string{rows[0], rule}, rows[1:]...) {
		// A short row gets empty cells: a line with fewer cells would end
		// tabwriter's column blocks, and the rows after it would align on
		// their own.
		if n := len(widths) - len(r); n > 0 {
			r = append(r[:len(r):len(r)], make([]string, n)...)
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if l != "" {
			out.WriteString(strings.TrimRight(l, " \n") + "\n")
		}
	}
	_, err := fmt.Fprint(w, out.String())
	return err
}
