package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("silver")
	flags(fs)
	flagsdoc.Check(t, "silver", fs)
}
