// Command query shows what the lakehouse holds, without Spark: the tables
// of the catalog, a table's snapshots with their summaries, its row count,
// and its first rows as a text table.
//
//	go run ./pipelines/query tables
//	go run ./pipelines/query snapshots lakehouse.bronze_events
//	go run ./pipelines/query count lakehouse.bronze_events
//	go run ./pipelines/query head lakehouse.bronze_events_dlq -n 5
//
// Its catalog flags are those of pipelines/bronze, with the same defaults,
// so it reads what `go run ./pipelines/bronze --runner=direct` made.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
)

func main() { runners.ToolMain(run) }

// run is the whole command: exit 0, 1 when the catalog or the table fails
// us, 2 for a bad command line.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage)
		fs := flag.NewFlagSet("query", flag.ContinueOnError)
		flags(fs)
		runners.Usage(stdout, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "query: %v\n", err)
		return 2
	}
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "query: --catalog-uri=%s: %v\n", secret.RedactURI(cfg.Catalog.URI), err)
		return 1
	}
	defer func() {
		if c, ok := cat.(catalog.Closer); ok {
			_ = c.Close()
		}
	}()
	q := &query{cfg: cfg, cat: cat, out: stdout, color: wantColor(cfg.Color, stdout, getenv)}
	switch cfg.Command {
	case "tables":
		err = q.tables(ctx)
	case "snapshots":
		err = q.snapshots(ctx)
	case "count":
		err = q.count(ctx)
	case "head":
		err = q.head(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "query %s: %v\n", cfg.Command, err)
		return 1
	}
	return 0
}

type query struct {
	cfg   Config
	cat   catalog.Catalog
	out   io.Writer
	color bool
}

// load loads the table of the command line.
func (q *query) load(ctx context.Context) (*table.Table, error) {
	id, err := icebergio.Identifier(q.cfg.Table)
	if err != nil {
		return nil, err
	}
	tbl, err := q.cat.LoadTable(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("no table %s in catalog %q (%s); `query tables` lists them", q.cfg.Table, q.cfg.Catalog.Name, secret.RedactURI(q.cfg.Catalog.URI))
	}
	return tbl, err
}

// wantColor decides whether to highlight with ANSI escapes.
func wantColor(mode string, out io.Writer, getenv func(string) string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
