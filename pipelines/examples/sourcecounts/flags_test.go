package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("sourcecounts")
	pipeline.Flags(fs)
	flagsdoc.Check(t, "sourcecounts", fs)
}
