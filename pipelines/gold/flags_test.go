package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("gold")
	flags(fs)
	cmdtest.FlagsDoc(t, "gold", fs)
}
