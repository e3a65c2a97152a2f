package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/haade/haade/io/icebergio"
	icemaint "github.com/haade/haade/io/icebergio/maintain"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/runners/lineage"
)

// Config is everything table maintenance needs. Every flag can also be set
// as HAADE_<FLAG>.
type Config struct {
	// Catalog says where the tables live, as for pipelines/bronze.
	Catalog icebergio.CatalogConfig
	// Tables are the "namespace.table" names to maintain, in order.
	Tables []string
	// Options are the maintenance actions and their settings.
	Options icemaint.MaintainOptions
	// Timeout bounds the whole run, retries after conflicts included.
	Timeout time.Duration
	// LogFormat is text or json.
	LogFormat string
	// Lineage is where OpenLineage run events go (runners/lineage); empty: off.
	Lineage string
}

// flags defines the command line on fs and returns a func that builds the
// Config after fs is parsed.
func flags(fs *flag.FlagSet) func() (Config, error) {
	tables := fs.String("tables", "lakehouse.bronze_events,lakehouse.bronze_events_dlq", "comma-separated tables to maintain, namespace.table")
	catalogConfig := icebergio.CatalogFlags(fs)
	target := sizeFlag(128 << 20)
	fs.Var(&target, "target-file-size", "size of the data files compaction writes: bytes, or with KB, MB, GB, KiB, MiB, GiB")
	minFiles := fs.Int("min-input-files", 5, "fewest small files of one partition worth compacting together")
	expire := fs.Duration("expire-older-than", 24*time.Hour, "expire snapshots older than this (the newest --retain-last and each pipeline's offsets snapshot stay)")
	retain := fs.Int("retain-last", 10, "newest snapshots always kept")
	orphans := fs.Duration("orphan-older-than", 72*time.Hour, "delete unreferenced files older than this; at least 1h")
	actions := fs.String("actions", joinActions(icemaint.Actions), "comma-separated actions to run, always in this order")
	timeout := fs.Duration("timeout", time.Hour, "give up after this long, retries included")
	logFormat := fs.String("log-format", "text", "text or json")
	lineageURL := lineage.Flag(fs)

	return func() (Config, error) {
		c := Config{
			Catalog:   catalogConfig(),
			Timeout:   *timeout,
			LogFormat: *logFormat,
			Lineage:   lineageURL(),
			Options: icemaint.MaintainOptions{
				Compact:         icemaint.CompactOptions{TargetFileSize: int64(target), MinInputFiles: *minFiles},
				ExpireOlderThan: *expire, RetainLast: *retain, OrphanOlderThan: *orphans,
			},
		}
		for _, t := range strings.Split(*tables, ",") {
			if t = strings.TrimSpace(t); t != "" {
				c.Tables = append(c.Tables, t)
			}
		}
		as, err := icemaint.ParseActions(*actions)
		if err != nil {
			return c, fmt.Errorf("--actions=%q: %v", *actions, err)
		}
		c.Options.Actions = as
		return c, c.validate()
	}
}

// validate checks the configuration; each error names its flag.
func (c Config) validate() error {
	if len(c.Tables) == 0 {
		return errors.New("--tables: empty")
	}
	if _, err := lineage.ParseURL(c.Lineage); err != nil {
		return fmt.Errorf("--lineage: %v", err)
	}
	for _, t := range c.Tables {
		if _, err := icebergio.Identifier(t); err != nil {
			return fmt.Errorf("--tables: %v", err)
		}
	}
	o := c.Options
	if o.Compact.TargetFileSize < 1<<20 {
		return fmt.Errorf("--target-file-size=%d: want at least 1MiB", o.Compact.TargetFileSize)
	}
	if o.Compact.MinInputFiles < 2 {
		return fmt.Errorf("--min-input-files=%d: want at least 2", o.Compact.MinInputFiles)
	}
	if o.ExpireOlderThan <= 0 {
		return fmt.Errorf("--expire-older-than=%v: want > 0", o.ExpireOlderThan)
	}
	if o.RetainLast < 1 {
		return fmt.Errorf("--retain-last=%d: want at least 1", o.RetainLast)
	}
	if o.OrphanOlderThan < icemaint.MinOrphanAge {
		return fmt.Errorf("--orphan-older-than=%v: want at least %v: a writer's files may wait that long for their commit", o.OrphanOlderThan, icemaint.MinOrphanAge)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("--timeout=%v: want > 0", c.Timeout)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format=%q: want text or json", c.LogFormat)
	}
	// Last, as it looks at the file system: maintenance never creates a catalog.
	return icebergio.CheckExistingFlags(c.Catalog)
}

func joinActions(as []icemaint.Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ",")
}

// sizeFlag is a byte size: 134217728, 128MiB, 0.5GB.
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

// Set parses v with go-humanize (B, KB, MB, GB, KiB, MiB, GiB and the
// rest of its units, any case).
func (s *sizeFlag) Set(v string) error {
	n, err := humanize.ParseBytes(strings.TrimSpace(v))
	if err != nil || n > 1<<50 {
		return fmt.Errorf("want a size such as 134217728, 128MiB or 0.5GB")
	}
	*s = sizeFlag(n)
	return nil
}

// newFlagSet returns the command's flag set; it runs no Beam pipeline, so
// it has none of Beam's flags.
func newFlagSet() *flag.FlagSet { return runners.ToolFlagSet("maintain") }

// parseArgs parses a command line (without the program name) and the
// environment, as main does.
func parseArgs(args []string, getenv func(string) string) (Config, error) {
	return runners.ParseConfig(newFlagSet(), args, getenv, flags)
}
