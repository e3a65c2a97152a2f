package main

import (
	"testing"

	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := newFlagSet()
	flags(fs)
	flagsdoc.Check(t, "produce", fs)
}
