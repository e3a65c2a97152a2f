package main

import (
	"testing"

	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/cmdtest"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("silver")
	flags(fs)
	cmdtest.FlagsDoc(t, "silver", fs)
}
