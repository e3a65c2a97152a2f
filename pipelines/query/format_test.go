package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTable aligns on characters, not bytes, pads short rows' columns as
// the header's, and leaves no trailing blank (the output of the hand-written
// aligner it replaced, byte for byte).
func TestWriteTable(t *testing.T) {
	rows := [][]string{
		{"NAME", "Ü", "LAST"},
		{"ä", "two words", "x"},
		{"short row"},
		{"wide cell here", "", ""},
		{"y", "z  ", "end  "},
	}
	var b strings.Builder
	if err := writeTable(&b, rows, 12); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"NAME          Ü          LAST\n" +
		"------------  ---------  -----\n" +
		"ä             two words  x\n" +
		"short row\n" +
		"wide cell h…\n" +
		"y             z          end\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("writeTable (-want +got):\n%s", diff)
	}
	if err := writeTable(&b, nil, 0); err != nil {
		t.Errorf("no rows: %v", err)
	}
}
