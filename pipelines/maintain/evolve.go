package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/runners"
)

// EvolveConfig is the configuration of `maintain evolve`: schema changes of
// one or more tables. Every flag can also be set as HAADE_<FLAG>.
type EvolveConfig struct {
	Catalog icebergio.CatalogConfig
	// Tables get the same change, in order (bronze, then silver).
	Tables []string
	Change icebergio.Change
	// Registry, when its URL is set, adds a promotion for every optional
	// member that the subject's latest version declares and version
	// SinceVersion did not (registryio.NewMembersBetween).
	Registry     registryio.Config
	SinceVersion int
	// Timeout bounds the run, retries after conflicts included.
	Timeout   time.Duration
	LogFormat string
}

// listFlag is a flag that may repeat, each value a comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func evolveFlags(fs *flag.FlagSet) func() (EvolveConfig, error) {
	var tables, promote, widen, rename listFlag
	fs.Var(&tables, "table", "table(s) to change, namespace.table, comma-separated (e.g. lakehouse.bronze_events,lakehouse.silver_events)")
	catalogConfig := icebergio.CatalogFlags(fs)
	fs.Var(&promote, "promote", "member:type to promote to a column of its own (type string, int, long, float, double, boolean or timestamptz); repeatable")
	fs.Var(&widen, "widen", "column:type to widen a promoted column to (int to long, float to double); repeatable")
	fs.Var(&rename, "rename", "old:new to rename a promoted column; repeatable")
	overflow := fs.String("overflow", "extra", "the JSON object column promoted members come out of")
	registry := registryio.ClientFlags(fs)
	since := fs.Int("since-version", 0, "with --schema-registry: promote the optional members that the subject's latest version adds since this version")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long, retries included")
	logFormat := fs.String("log-format", "text", "text or json")
	return func() (EvolveConfig, error) {
		c := EvolveConfig{Catalog: catalogConfig(), Tables: tables, Timeout: *timeout, LogFormat: *logFormat,
			Change: icebergio.Change{Overflow: *overflow}, Registry: registry("fintech.debt.raw"), SinceVersion: *since}
		if len(c.Tables) == 0 {
			return c, errors.New("--table: empty (want namespace.table)")
		}
		for _, t := range c.Tables {
			if _, err := icebergio.Identifier(t); err != nil {
				return c, fmt.Errorf("--table=%s: %v", t, err)
			}
		}
		for _, p := range promote {
			name, typ, err := pair(p)
			if err != nil {
				return c, fmt.Errorf("--promote=%s: %v", p, err)
			}
			t, err := icebergio.ParseType(typ)
			if err != nil {
				return c, fmt.Errorf("--promote=%s: %v", p, err)
			}
			c.Change.Promote = append(c.Change.Promote, icebergio.Promotion{Column: name, Type: t})
		}
		for _, w := range widen {
			name, typ, err := pair(w)
			if err != nil {
				return c, fmt.Errorf("--widen=%s: %v", w, err)
			}
			t, err := icebergio.ParseType(typ)
			if err != nil {
				return c, fmt.Errorf("--widen=%s: %v", w, err)
			}
			c.Change.Widen = append(c.Change.Widen, icebergio.Widening{Column: name, Type: t})
		}
		for _, r := range rename {
			from, to, err := pair(r)
			if err != nil {
				return c, fmt.Errorf("--rename=%s: %v", r, err)
			}
			c.Change.Rename = append(c.Change.Rename, icebergio.Renaming{From: from, To: to})
		}
		if c.Registry.URL != "" {
			if err := registryio.CheckFlags(c.Registry); err != nil {
				return c, err
			}
			if c.SinceVersion < 1 {
				return c, fmt.Errorf("--since-version=%d: want the subject's version (>= 1) to promote the new members since, with --schema-registry", c.SinceVersion)
			}
		} else if c.SinceVersion != 0 {
			return c, fmt.Errorf("--since-version=%d: needs --schema-registry", c.SinceVersion)
		}
		if len(c.Change.Promote)+len(c.Change.Widen)+len(c.Change.Rename) == 0 && c.Registry.URL == "" {
			return c, errors.New("--promote, --widen, --rename or --schema-registry: none given")
		}
		if c.Timeout <= 0 {
			return c, fmt.Errorf("--timeout=%v: want > 0", c.Timeout)
		}
		if c.LogFormat != "text" && c.LogFormat != "json" {
			return c, fmt.Errorf("--log-format=%q: want text or json", c.LogFormat)
		}
		return c, icebergio.CheckExistingFlags(c.Catalog)
	}
}

// pair splits "a:b".
func pair(s string) (string, string, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok || a == "" || b == "" {
		return "", "", errors.New("want name:value")
	}
	return strings.TrimSpace(a), strings.TrimSpace(b), nil
}

// runEvolve is `maintain evolve`: exit 0 when every table has the change,
// 1 when one was refused or failed, 2 for a bad command line.
func runEvolve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, code, ok := runners.Tool(runners.ToolFlagSet("maintain evolve"), args, getenv, stdout, stderr, evolveFlags)
	if !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cat, err := cfg.Catalog.Open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "maintain evolve: --catalog-uri=%s: %v\n", secret.RedactURI(cfg.Catalog.URI), err)
		return 2
	}
	defer closeCatalog(cat)
	if cfg.Registry.URL != "" {
		added, err := registryPromotions(ctx, cfg, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "maintain evolve: --schema-registry=%s: %v\n", registryio.Redact(cfg.Registry.URL), err)
			return 1
		}
		cfg.Change.Promote = append(cfg.Change.Promote, added...)
		if len(cfg.Change.Promote)+len(cfg.Change.Widen)+len(cfg.Change.Rename) == 0 {
			fmt.Fprintf(stdout, "%s: no optional member with a column type added since version %d: nothing to do\n", cfg.Registry.Subject, cfg.SinceVersion)
			return 0
		}
	}
	for _, ident := range cfg.Tables {
		rep, err := icebergio.Evolve(ctx, cat, ident, cfg.Change)
		if err != nil {
			fmt.Fprintf(stderr, "maintain evolve: %v\n", err)
			return 1
		}
		for _, a := range rep.Applied {
			fmt.Fprintf(stdout, "%s: %s\n", ident, a)
		}
		for _, u := range rep.Unchanged {
			fmt.Fprintf(stdout, "%s: already: %s\n", ident, u)
		}
		fmt.Fprintf(stdout, "%s: schema %d (was %d); no data file rewritten\n", ident, rep.SchemaID, rep.Before)
	}
	return 0
}

// registryPromotions returns a promotion for every optional member that the
// latest version of the registry subject adds since cfg.SinceVersion, and
// says which new members have no column type (they stay in the overflow
// column).
func registryPromotions(ctx context.Context, cfg EvolveConfig, stdout io.Writer) ([]icebergio.Promotion, error) {
	reg := cfg.Registry // the password, if any, comes from the environment
	res, err := registryio.NewResolver(reg)
	if err != nil {
		return nil, err
	}
	ms, err := registryio.NewMembersBetween(ctx, res, reg.Subject, cfg.SinceVersion, -1)
	if err != nil {
		return nil, err
	}
	var out []icebergio.Promotion
	for _, m := range ms {
		if m.Type == nil {
			fmt.Fprintf(stdout, "%s: member %s (%s) not promoted: %s\n", reg.Subject, m.Name, m.JSONType, m.Note)
			continue
		}
		fmt.Fprintf(stdout, "%s: member %s (%s) added since version %d: promote to %s\n", reg.Subject, m.Name, m.JSONType, cfg.SinceVersion, m.Type)
		out = append(out, icebergio.Promotion{Column: m.Name, Type: m.Type})
	}
	return out, nil
}
