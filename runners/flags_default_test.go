package runners

import (
	"flag"
	"testing"
)

// A flag set made after a run set one of Beam's process-wide flags still
// gives Beam's default as the flag's default (for --help and docs/flags.md).
func TestNewFlagSetKeepsBeamDefaults(t *testing.T) {
	f := flag.CommandLine.Lookup("environment_type")
	if f == nil {
		t.Fatal("Beam's --environment_type is not registered")
	}
	old := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(old) })
	if err := f.Value.Set("LOOPBACK"); err != nil {
		t.Fatal(err)
	}
	fs := NewFlagSet("test")
	if got := fs.Lookup("environment_type").DefValue; got != f.DefValue {
		t.Errorf("--environment_type's default in a new flag set: %q, want Beam's %q", got, f.DefValue)
	}
}
