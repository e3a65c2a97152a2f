package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.ToolFlagSet("query")
	flags(fs)
	flagsdoc.Check(t, "query", fs)
}
