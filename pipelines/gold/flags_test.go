package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("gold")
	flags(fs)
	flagsdoc.Check(t, "gold", fs)
}
