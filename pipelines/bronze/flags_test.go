package main

import (
	"testing"

	"github.com/haade/haade/pipelines/bronze/bronze"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := runners.NewFlagSet("bronze")
	bronze.Flags(fs)
	flagsdoc.Check(t, "bronze", fs)
}
