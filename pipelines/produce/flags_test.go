package main

import (
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

func TestFlagsDoc(t *testing.T) {
	fs := newFlagSet()
	flags(fs)
	cmdtest.FlagsDoc(t, "produce", fs)
}
