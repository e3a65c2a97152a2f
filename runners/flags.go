package runners

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/haade/haade/internal/flagenv"
)

// NewFlagSet returns a flag set that already holds Beam's own flags
// (--endpoint, --environment_type, --environment_config, --worker_binary,
// --runner, and the worker flags the boot program passes), sharing their
// values, so that one parse serves both and beam.Init sees the result.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		fs.Var(f.Value, f.Name, f.Usage)
		// Var takes the value's current string as the default: an earlier
		// run in this process may have set it. The default is Beam's.
		fs.Lookup(f.Name).DefValue = f.DefValue
	})
	return fs
}

// String defines a string flag, or reuses Beam's flag of that name (for
// example --runner and --endpoint), giving it def as default. The returned
// func reads the flag's value after Parse.
func String(fs *flag.FlagSet, name, def, usage string) func() string {
	if f := fs.Lookup(name); f == nil {
		fs.String(name, def, usage)
	} else {
		// Beam's flag is process-wide: reset it so that an earlier parse or
		// run in this process leaves nothing behind.
		_ = f.Value.Set(def)
		f.DefValue = def
		f.Usage = usage
	}
	return func() string { return fs.Lookup(name).Value.String() }
}

// Usage writes the flag set's flags to w: HAADE's first, then, under a
// heading of their own, the flags of Beam's that HAADE has not taken over
// (the worker's, set by Beam's boot program or the job server).
func Usage(w io.Writer, fs *flag.FlagSet) {
	own, beam := splitFlags(fs)
	print := func(flags []*flag.Flag) {
		sub := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		for _, f := range flags {
			sub.Var(f.Value, f.Name, f.Usage)
			sub.Lookup(f.Name).DefValue = f.DefValue
		}
		sub.SetOutput(w)
		sub.PrintDefaults()
	}
	print(own)
	if len(beam) > 0 {
		fmt.Fprintln(w, "\nApache Beam's worker flags (set by Beam's boot program or the job server, not by hand):")
		print(beam)
	}
}

// Markdown writes the flag set's own flags (not Beam's worker flags) as a
// Markdown table: flag, default, environment variable, meaning.
func Markdown(w io.Writer, fs *flag.FlagSet) {
	own, _ := splitFlags(fs)
	fmt.Fprintln(w, "| flag | default | environment | meaning |")
	fmt.Fprintln(w, "|---|---|---|---|")
	cell := strings.NewReplacer("|", "\\|", "\n", " ")
	for _, f := range own {
		def := ""
		if f.DefValue != "" {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(w, "| `--%s` | %s | `%s` | %s |\n", f.Name, def, flagenv.EnvName(f.Name), cell.Replace(f.Usage))
	}
}

// submitFlags are the flags on flag.CommandLine that a user sets: HAADE's
// Flink flags (flink_flags.go, global so that Beam's worker parses them
// too) and the flags of Beam's that a submission takes.
var submitFlags = map[string]bool{
	"flink-rest": true, "replace": true, "cancel": true, "flink-max-bundle-time": true,
	"flink-cluster-classpath": true, "async-wait": true,
	"async": true, "parallelism": true, "environment_type": true, "environment_config": true,
	"worker_binary": true, "job_name": true,
}

// splitFlags parts fs's flags, in name order, into those a user sets and
// Beam's worker flags: a flag of flag.CommandLine whose usage HAADE did not
// replace (see String), and which is not in submitFlags, is a worker flag.
func splitFlags(fs *flag.FlagSet) (own, beam []*flag.Flag) {
	fs.VisitAll(func(f *flag.Flag) {
		if b := flag.CommandLine.Lookup(f.Name); b != nil && b.Usage == f.Usage && !submitFlags[f.Name] {
			beam = append(beam, f)
			return
		}
		own = append(own, f)
	})
	return own, beam
}

// DefaultMetricsAddr is --metrics-addr's default: loopback, so that a run on
// a laptop serves nothing to the network. Kubernetes manifests set the pod's
// address explicitly (HAADE_METRICS_ADDR set to :9102 in bronze-config).
const DefaultMetricsAddr = "127.0.0.1:9102"
