// Package flagenv parses a HAADE command line: flags from the arguments,
// then each flag not given from its environment variable HAADE_<FLAG>, with
// one-line errors that name the flag. It imports only the standard library,
// so that small commands (mkbucket) share it without linking Beam.
package flagenv

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Parse parses args into fs, then sets every flag that args did not set
// from the environment variable HAADE_<NAME> (upper case, dashes as
// underscores), read through getenv. An error names the flag, in one line.
// Afterwards fs.Visit visits every flag given, by argument or environment.
var badValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for flag -([^:]+): (.*)$`)

func Parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		if m := badValue.FindStringSubmatch(err.Error()); m != nil {
			// The flag package says `invalid value "abc" for flag -x: parse
			// error`; name the flag as it is written, first, and what it
			// wants when the flag package only says "parse error".
			if w := wants(fs.Lookup(m[2])); w != "" {
				return fmt.Errorf("--%s=%s: %s", m[2], m[1], w)
			}
			return fmt.Errorf("--%s=%s: %s", m[2], m[1], m[3])
		}
		return errors.New(strings.ReplaceAll(err.Error(), "flag provided but not defined: -", "unknown flag --"))
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags are --name=value)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := EnvName(f.Name)
		if v := getenv(env); v != "" {
			// fs.Set, not f.Value.Set: a flag set from the environment is
			// set, for fs.Visit, as one given on the command line is.
			if e := fs.Set(f.Name, v); e != nil {
				if w := wants(f); w != "" {
					e = errors.New(w)
				}
				err = fmt.Errorf("invalid value %q for --%s from $%s: %v", v, f.Name, env, e)
			}
		}
	})
	return err
}

// wants says what kind of value f takes, for the message about a value it
// could not parse; "" when its type says nothing more than its own error.
func wants(f *flag.Flag) string {
	if f == nil {
		return ""
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration such as 10s, 1m30s or 2h"
	case bool:
		return "want true or false"
	case int, int64, uint, uint64:
		return "want a whole number"
	case float64:
		return "want a number"
	}
	return ""
}

// EnvName is the environment variable that sets a flag: HAADE_<NAME>.
func EnvName(flagName string) string {
	return "HAADE_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flagName))
}
