package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/haade/haade/internal/flagenv"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
)

// Config is what every subcommand needs. Every flag can also be set as
// HAADE_<FLAG>.
type Config struct {
	// Catalog says where the tables live, as for pipelines/bronze; the
	// defaults read what `go run ./pipelines/bronze --runner=direct` made.
	Catalog icebergio.CatalogConfig
	// Command is tables, snapshots, count or head; Table its argument.
	Command, Table string
	// N is how many rows head prints. Default 20.
	N int
	// Width is the most characters of one cell; longer ones are cut.
	Width int
	// Color is auto (on a terminal), always or never.
	Color string
}

// commands lists the subcommands and whether each takes a TABLE.
var commands = map[string]bool{"tables": false, "snapshots": true, "count": true, "head": true}

const usage = `usage: query [flags] COMMAND [TABLE]
  tables            list namespaces and tables
  snapshots TABLE   list snapshots, oldest first, with timestamps, operations and summaries (haade.* keys marked *)
  count TABLE       print the number of rows
  head TABLE        print the first rows as a table (-n rows)
TABLE is namespace.table, e.g. lakehouse.bronze_events. Flags may come before or after the command;
every flag can also be set as HAADE_<FLAG>.`

func flags(fs *flag.FlagSet) func(pos []string) (Config, error) {
	catalogConfig := icebergio.CatalogFlags(fs)
	n := fs.Int("n", 20, "rows that head prints")
	width := fs.Int("width", 40, "most characters of one cell; longer cells are cut with …")
	color := fs.String("color", "auto", "highlight haade.* keys: auto (on a terminal), always or never")

	return func(pos []string) (Config, error) {
		c := Config{
			Catalog: catalogConfig(),
			N:       *n, Width: *width, Color: *color,
		}
		if len(pos) == 0 {
			return c, errors.New("no command; want tables, snapshots, count or head")
		}
		c.Command = pos[0]
		needsTable, ok := commands[c.Command]
		if !ok {
			return c, fmt.Errorf("unknown command %q; want tables, snapshots, count or head", c.Command)
		}
		switch {
		case needsTable && len(pos) < 2:
			return c, fmt.Errorf("%s: want a TABLE, namespace.table", c.Command)
		case needsTable && len(pos) > 2, !needsTable && len(pos) > 1:
			return c, fmt.Errorf("%s: unexpected argument %q", c.Command, pos[len(pos)-1])
		}
		if needsTable {
			c.Table = pos[1]
			if _, err := icebergio.Identifier(c.Table); err != nil {
				return c, fmt.Errorf("%s: %v", c.Command, err)
			}
		}
		return c, c.validate()
	}
}

func (c Config) validate() error {
	if c.N < 0 {
		return fmt.Errorf("-n=%d: want >= 0", c.N)
	}
	if c.Width < 4 {
		return fmt.Errorf("--width=%d: want at least 4", c.Width)
	}
	if c.Color != "auto" && c.Color != "always" && c.Color != "never" {
		return fmt.Errorf("--color=%q: want auto, always or never", c.Color)
	}
	// Last, as it looks at the file system: query never creates a catalog.
	err := icebergio.CheckExistingFlags(c.Catalog)
	if errors.Is(err, icebergio.ErrCatalog) { // no SQLite catalog there
		return fmt.Errorf("%w (run `go run ./pipelines/bronze --runner=direct` to make one)", err)
	}
	return err
}

// parseArgs parses flags placed anywhere among the command and its TABLE,
// then fills unset flags from HAADE_<FLAG>.
func parseArgs(args []string, getenv func(string) string) (Config, error) {
	fs := runners.ToolFlagSet("query")
	cfg := flags(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return Config{}, err
			}
			return Config{}, errors.New(strings.Replace(err.Error(), "flag provided but not defined: -", "unknown flag --", 1))
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := flagenv.Parse(fs, nil, getenv); err != nil {
		return Config{}, err
	}
	return cfg(pos)
}
