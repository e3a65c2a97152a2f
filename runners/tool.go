package runners

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Tool is Command for a command that runs no Beam pipeline: fs holds only
// its own flags, and there is no worker mode.
func Tool[C any](fs *flag.FlagSet, args []string, getenv func(string) string, stdout, stderr io.Writer,
	flags func(*flag.FlagSet) func() (C, error)) (cfg C, code int, ok bool) {
	return parseCommand(fs, fs.Name(), args, getenv, stdout, stderr, flags, func() {})
}

// ToolMain runs the command of a tool, a command that runs no Beam
// pipeline (maintain, query), on the process's command line, environment
// and standard streams, and exits with the code run returns. SIGINT and
// SIGTERM cancel run's context.
func ToolMain(run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// ToolFlagSet returns the flag set of a command called name that runs no
// Beam pipeline: none of Beam's flags, and no output of its own.
func ToolFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
