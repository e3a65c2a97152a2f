package runners

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	flags := func(fs *flag.FlagSet) func() (string, error) {
		v := fs.String("table", "lakehouse.t", "a table")
		return func() (string, error) {
			if !strings.Contains(*v, ".") {
				return "", errors.New("--table: want namespace.table")
			}
			return *v, nil
		}
	}
	env := func(k string) string {
		if k == "HAADE_TABLE" {
			return "ns.from_env"
		}
		return ""
	}
	cases := []struct {
		args      []string
		getenv    func(string) string
		want      string
		code      int
		ok        bool
		stderrHas string
	}{
		{nil, func(string) string { return "" }, "lakehouse.t", 0, true, ""},
		{nil, env, "ns.from_env", 0, true, ""},
		{[]string{"--table=x"}, env, "", 2, false, "--table"},
		{[]string{"--nope"}, env, "", 2, false, "--nope"},
		{[]string{"--help"}, env, "", 0, false, ""},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		got, code, ok := Command("t", tc.args, tc.getenv, &out, &errb, flags)
		if got != tc.want || code != tc.code || ok != tc.ok {
			t.Errorf("%v: got (%q, %d, %v), want (%q, %d, %v)", tc.args, got, code, ok, tc.want, tc.code, tc.ok)
		}
		if lines := strings.Count(strings.TrimSpace(errb.String()), "\n"); tc.stderrHas != "" && (lines != 0 || !strings.Contains(errb.String(), tc.stderrHas)) {
			t.Errorf("%v: stderr %q, want one line naming %s", tc.args, errb.String(), tc.stderrHas)
		}
	}
}
