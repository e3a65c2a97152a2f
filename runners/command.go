package runners

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/internal/flagenv"
)

// Command parses the command line of a pipeline called name: its flags,
// defined by flags on a set that also holds Beam's, then HAADE_* from
// getenv, then worker mode (beam.Init, which does not return in a worker),
// then the Config, with its flags' relative paths made absolute, or
// refused, for a remote runner (submitPaths). When ok is false the command is done: exit with code
// (0 after --help; 2 after one line on stderr that names the bad flag).
func Command[C any](name string, args []string, getenv func(string) string, stdout, stderr io.Writer,
	flags func(*flag.FlagSet) func() (C, error)) (cfg C, code int, ok bool) {
	return parseCommand(NewFlagSet(name), name, args, getenv, stdout, stderr, absolutePaths(flags), beam.Init)
}

// ParseConfig parses a command line (without the program name) and the
// environment into the Config that flags defines on fs, as Command and Tool
// do, without printing: for tests.
func ParseConfig[C any](fs *flag.FlagSet, args []string, getenv func(string) string, flags func(*flag.FlagSet) func() (C, error)) (C, error) {
	cfg := absolutePaths(flags)(fs)
	if err := flagenv.Parse(fs, args, getenv); err != nil {
		var zero C
		return zero, err
	}
	return cfg()
}

func parseCommand[C any](fs *flag.FlagSet, name string, args []string, getenv func(string) string, stdout, stderr io.Writer,
	flags func(*flag.FlagSet) func() (C, error), init func()) (cfg C, code int, ok bool) {
	config := flags(fs)
	if err := flagenv.Parse(fs, args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s [flags]; every flag can also be set as HAADE_<FLAG>\n", name)
			Usage(stdout, fs)
			return cfg, 0, false
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return cfg, 2, false
	}
	init()
	cfg, err := config()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return cfg, 2, false
	}
	return cfg, 0, true
}
