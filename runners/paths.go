package runners

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// Paths mean the same on every worker. A flag's file path is serialized
// into the pipeline as it was typed, and a worker of a remote runner opens
// it in its own working directory: Beam's boot program runs the Go worker
// in the job server's (PROCESS) or the container's (DOCKER, EXTERNAL). The
// default catalog, lakehouse/catalog.db, then became a new, empty catalog
// beside the job server, and the run stalled in silence.
//
// So, before the Config is read, submitPaths rewrites the relative paths
// of pathFlags as absolute ones of the submitting directory when the
// workers run on this machine (LOOPBACK, PROCESS), and refuses them, in
// one line that names the flag, when they run elsewhere (DOCKER, the
// default, and EXTERNAL): there only the user knows what the workers
// share. Prism runs its workers in this process, and needs neither.
// --lineage needs nothing: it takes only file:///absolute paths, and only
// the launcher writes it.

// pathFlags are the flags whose value may be a file path that a worker
// opens, with how to find the path in a value: the part before it, the
// path, and the part after it; ok is false for a value that is no local
// path (a URL of a server, or empty).
var pathFlags = map[string]func(v string) (pre, path, post string, ok bool){
	// --catalog-uri: a SQLite path, "file:" or "file://" before it and
	// "?..." after it allowed (icebergio.CatalogConfig.Properties); a
	// postgres:// or http(s):// URL is not a path.
	"catalog-uri": func(v string) (string, string, string, bool) {
		pre := ""
		switch {
		case strings.HasPrefix(v, "file://"):
			pre = "file://"
		case strings.HasPrefix(v, "file:"):
			pre = "file:"
		case strings.Contains(v, "://"):
			return "", "", "", false
		}
		path, query, _ := strings.Cut(strings.TrimPrefix(v, pre), "?")
		if query != "" {
			query = "?" + query
		}
		return pre, path, query, path != ""
	},
	// --warehouse: a path, or file:// before it; s3:// and the other
	// schemes are not local.
	"warehouse": func(v string) (string, string, string, bool) {
		if p, ok := strings.CutPrefix(v, "file://"); ok {
			return "file://", p, "", p != ""
		}
		return "", v, "", v != "" && !strings.Contains(v, "://")
	},
	"kafka-tls-ca":   plainPath,
	"kafka-tls-cert": plainPath,
	"kafka-tls-key":  plainPath,
}

func plainPath(v string) (string, string, string, bool) { return "", v, "", v != "" }

// workersHere says whether the environment's workers run on this machine,
// in a directory of their own: LOOPBACK (this process) and PROCESS (a
// command the job server's TaskManagers start). Beam's default is DOCKER.
func workersHere(envType string) bool {
	switch strings.ToUpper(envType) {
	case "LOOPBACK", "PROCESS":
		return true
	}
	return false
}

// submitPaths makes the relative paths of fs's pathFlags absolute, or
// refuses them, for a runner whose workers are not this process (see
// above). It sets the flag's value, not fs.Set: a flag left at its default
// stays unset for fs.Visit (bronze's demo looks there). A relative path on
// a runner whose workers run elsewhere is an error that names the flag.
func submitPaths(fs *flag.FlagSet, runner, envType string) error {
	if runner != "flink" && runner != "universal" {
		return nil
	}
	here := workersHere(envType)
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		split, ok := pathFlags[f.Name]
		if !ok || err != nil {
			return
		}
		v := f.Value.String()
		pre, path, post, ok := split(v)
		if !ok || filepath.IsAbs(path) {
			return
		}
		if !here {
			env := strings.ToUpper(envType)
			if env == "" {
				env = "DOCKER (Beam's default)"
			}
			err = fmt.Errorf("--%s=%s: a relative path, and the workers of --environment_type=%s do not run in this directory: give a path they share, absolute, or a server's URL", f.Name, v, env)
			return
		}
		abs, e := filepath.Abs(path)
		if e != nil {
			err = fmt.Errorf("--%s=%s: %v", f.Name, v, e)
			return
		}
		if e := f.Value.Set(pre + abs + post); e != nil {
			err = fmt.Errorf("--%s=%s: %v", f.Name, v, e)
		}
	})
	return err
}

// absolutePaths wraps a pipeline's flags function: once fs is parsed, the
// paths are made absolute (or refused) before the Config is read, so that
// the pipeline is built, and serialized, with them.
func absolutePaths[C any](flags func(*flag.FlagSet) func() (C, error)) func(*flag.FlagSet) func() (C, error) {
	return func(fs *flag.FlagSet) func() (C, error) {
		config := flags(fs)
		return func() (C, error) {
			runner, endpoint := "", ""
			if f := fs.Lookup("runner"); f != nil {
				runner = f.Value.String()
			}
			if f := fs.Lookup("endpoint"); f != nil {
				endpoint = f.Value.String()
			}
			if Validate(runner, endpoint) != nil {
				return config() // which names --runner or --endpoint
			}
			if err := submitPaths(fs, runner, *jobopts.EnvironmentType); err != nil {
				var zero C
				return zero, err
			}
			return config()
		}
	}
}
