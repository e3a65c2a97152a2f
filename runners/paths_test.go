package runners

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pathFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("catalog-uri", "lakehouse/catalog.db", "")
	fs.String("warehouse", "lakehouse/warehouse", "")
	fs.String("kafka-tls-ca", "", "")
	fs.String("kafka-tls-cert", "", "")
	fs.String("kafka-tls-key", "", "")
	fs.String("topic", "fintech.debt.raw", "")
	return fs
}

func TestSubmitPaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(wd, p) }
	for _, c := range []struct {
		name          string
		runner, env   string
		args          []string
		want          map[string]string
		wantErr       string
		wantVisitedOf []string
	}{
		{name: "PROCESS: defaults and relative paths become absolute", runner: "flink", env: "PROCESS",
			args: []string{"--kafka-tls-ca=ca.pem", "--kafka-tls-cert=/etc/tls/c.pem"},
			want: map[string]string{"catalog-uri": abs("lakehouse/catalog.db"), "warehouse": abs("lakehouse/warehouse"),
				"kafka-tls-ca": abs("ca.pem"), "kafka-tls-cert": "/etc/tls/c.pem", "kafka-tls-key": "", "topic": "fintech.debt.raw"},
			wantVisitedOf: []string{"kafka-tls-ca", "kafka-tls-cert"}},
		{name: "LOOPBACK: file: and file:// forms keep their form", runner: "flink", env: "loopback",
			args: []string{"--catalog-uri=file:cat.db?mode=rwc", "--warehouse=file://wh"},
			want: map[string]string{"catalog-uri": "file:" + abs("cat.db") + "?mode=rwc", "warehouse": "file://" + abs("wh"),
				"kafka-tls-ca": "", "kafka-tls-cert": "", "kafka-tls-key": "", "topic": "fintech.debt.raw"},
			wantVisitedOf: []string{"catalog-uri", "warehouse"}},
		{name: "URLs are left alone", runner: "flink", env: "EXTERNAL",
			args: []string{"--catalog-uri=postgres://u@db:5432/cat", "--warehouse=s3://warehouse/"},
			want: map[string]string{"catalog-uri": "postgres://u@db:5432/cat", "warehouse": "s3://warehouse/",
				"kafka-tls-ca": "", "kafka-tls-cert": "", "kafka-tls-key": "", "topic": "fintech.debt.raw"},
			wantVisitedOf: []string{"catalog-uri", "warehouse"}},
		{name: "EXTERNAL refuses the default catalog path", runner: "flink", env: "EXTERNAL",
			args:    []string{"--warehouse=s3://warehouse/"},
			wantErr: "--catalog-uri=lakehouse/catalog.db: a relative path, and the workers of --environment_type=EXTERNAL"},
		{name: "DOCKER (Beam's default) refuses a relative TLS file", runner: "universal", env: "",
			args:    []string{"--catalog-uri=/data/c.db", "--warehouse=s3://w/", "--kafka-tls-key=key.pem"},
			wantErr: "--kafka-tls-key=key.pem: a relative path, and the workers of --environment_type=DOCKER (Beam's default)"},
		{name: "Prism runs its workers in process: nothing changes", runner: "direct", env: "",
			args: []string{"--kafka-tls-ca=ca.pem"},
			want: map[string]string{"catalog-uri": "lakehouse/catalog.db", "warehouse": "lakehouse/warehouse",
				"kafka-tls-ca": "ca.pem", "kafka-tls-cert": "", "kafka-tls-key": "", "topic": "fintech.debt.raw"},
			wantVisitedOf: []string{"kafka-tls-ca"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := pathFlagSet()
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := submitPaths(fs, c.runner, c.env)
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("submitPaths = %v; want one line starting %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			fs.VisitAll(func(f *flag.Flag) { got[f.Name] = f.Value.String() })
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("flags after submitPaths (-want +got):\n%s", diff)
			}
			// A default made absolute is still a default: bronze's demo
			// decides on the flags given.
			var visited []string
			fs.Visit(func(f *flag.Flag) { visited = append(visited, f.Name) })
			if diff := cmp.Diff(c.wantVisitedOf, visited); diff != "" {
				t.Errorf("flags given (-want +got):\n%s", diff)
			}
		})
	}
}
