//go:build e2e

package analytics

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// TestTrinoCatalogs: trino.sh's two other catalogs read what bronze writes
// through them: "rest" (the Iceberg REST catalog of rest.sh) and "demo"
// (the embedded demo's SQLite catalog and local warehouse).
func TestTrinoCatalogs(t *testing.T) {
	ctx := context.Background()
	t.Run("rest", func(t *testing.T) {
		_, err := cmdtest.Script(repoRoot, nil, "rest", "status")
		wasRunning := err == nil
		mustScript(t, "rest", "start")
		if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
			t.Cleanup(func() { _, _ = cmdtest.Script(repoRoot, nil, "rest", "stop") })
		}
		l := newLake(t, "rest")
		var s sample
		produce(t, l.topic, 800, 0, &s)
		args := l.bronzeArgs("--bounded")
		for i, a := range args {
			if strings.HasPrefix(a, "--catalog-uri=") {
				args[i] = "--catalog-uri=http://127.0.0.1:8181"
			}
		}
		l.run(bronzeBin, 5*time.Minute, append(args, "--catalog=rest")...)
		tr := newTrino(trinoURL, "rest", namespace)
		b, err := tr.count(ctx, strings.TrimPrefix(l.bronze, namespace+"."))
		if err != nil {
			t.Fatal(err)
		}
		d, err := tr.count(ctx, strings.TrimPrefix(l.dlq, namespace+"."))
		if err != nil {
			t.Fatal(err)
		}
		if b+d != int64(s.total()) || d != int64(len(badValues)+1) {
			t.Errorf("through the REST catalog: bronze %d + dead letters %d rows, want %d records (%d dead letters)", b, d, s.total(), len(badValues)+1)
		}
		t.Cleanup(func() {
			if !t.Failed() {
				for _, id := range []string{l.bronze, l.dlq} {
					_, _ = tr.query(ctx, "DROP TABLE IF EXISTS "+strings.TrimPrefix(id, namespace+"."))
				}
			}
		})
	})

	t.Run("demo", func(t *testing.T) {
		// The demo directory that trino.sh configured when it started Trino.
		run := os.Getenv("HAADE_RUN")
		if run == "" {
			run = "/tmp/haade-services"
		}
		props, err := os.ReadFile(filepath.Join(run, "trino/etc/catalog/demo.properties"))
		if err != nil {
			t.Fatalf("trino.sh's demo catalog: %v", err)
		}
		m := regexp.MustCompile(`connection-url=jdbc:sqlite:(.*)/catalog\.db`).FindSubmatch(props)
		if m == nil {
			t.Fatalf("no SQLite connection-url in demo.properties:\n%s", props)
		}
		dir := string(m[1])
		// The demo as a newcomer runs it: no --brokers, ./lakehouse beside it.
		cmd := exec.Command(bronzeBin, "--runner=direct", "--demo-events=500", "--metrics-addr=")
		cmd.Dir = filepath.Dir(dir)
		if filepath.Base(dir) != "lakehouse" {
			t.Fatalf("demo catalog at %s: the demo writes ./lakehouse", dir)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the embedded demo: %v\n%s", err, cmdtest.Tail(string(out), 30))
		}
		tr := newTrino(trinoURL, "demo", "lakehouse")
		for _, tbl := range []string{"bronze_events", "bronze_events_dlq"} {
			got, err := tr.count(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			q, err := exec.Command(queryBin, "count", "lakehouse."+tbl, "--catalog-uri="+dir+"/catalog.db", "--warehouse="+dir+"/warehouse").CombinedOutput()
			if err != nil {
				t.Fatalf("query count: %v\n%s", err, q)
			}
			if want := strings.TrimSpace(string(q)); want != strconv.FormatInt(got, 10) || got == 0 {
				t.Errorf("demo.lakehouse.%s: Trino counts %d, pipelines/query %s", tbl, got, want)
			}
		}
	})
}
