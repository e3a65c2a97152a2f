// Command maintain keeps Iceberg tables healthy while pipelines write to
// them: it compacts small data files, rewrites manifests, expires old
// snapshots (always keeping the snapshot each pipeline resumes from) and
// deletes orphan files. It is safe to run beside bronze: a conflict means
// reload and retry, and the committed offsets never change. It logs one
// line per action and table.
//
//	go run ./pipelines/maintain --catalog-uri=lakehouse/catalog.db --warehouse=lakehouse/warehouse
//
// `maintain evolve` changes a table's schema instead (see evolve.go):
//
//	go run ./pipelines/maintain evolve --table=lakehouse.bronze_events --promote=region:string
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/obs"
)

func main() { runners.ToolMain(run) }

// run is the whole command: exit 0 when every table was maintained, 1 when
// one failed, 2 for a bad command line.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (code int) {
	if len(args) > 0 && args[0] == "evolve" {
		return runEvolve(ctx, args[1:], getenv, stdout, stderr)
	}
	cfg, code, ok := runners.Tool(newFlagSet(), args, getenv, stdout, stderr, flags)
	if !ok {
		return code
	}
	_ = obs.SetupLogging(stderr, cfg.LogFormat)
	lin, err := newLineage(cfg, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "maintain: --lineage: %v\n", err)
		return 2
	}
	defer func() { lin.End(context.Background(), code) }()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		lin.Failed(err)
		fmt.Fprintf(stderr, "maintain: --catalog-uri=%s: %v\n", secret.RedactURI(cfg.Catalog.URI), err)
		return 2
	}
	defer closeCatalog(cat)
	lin.Start(ctx)
	failed := 0
	for _, ident := range cfg.Tables {
		if err := maintain(ctx, cat, ident, cfg.Options); err != nil {
			slog.Error("maintenance failed", "table", ident, "err", err)
			failed++
		}
	}
	if failed > 0 {
		lin.Failed(fmt.Errorf("%d of %d tables failed", failed, len(cfg.Tables)))
		fmt.Fprintf(stderr, "maintain: %d of %d tables failed\n", failed, len(cfg.Tables))
		return 1
	}
	return 0
}
