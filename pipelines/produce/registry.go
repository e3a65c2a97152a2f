package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/haade/haade/io/registryio"
)

// schemaConfig is what produce does with a schema registry.
type schemaConfig struct {
	// Registry is the registry; empty URL: none.
	Registry registryio.Config
	// RegisterFile, when set, is a JSON Schema file registered under
	// Registry.Subject at start (a no-op when that version exists).
	RegisterFile string
	// Wire prefixes every value with the wire-format header of the
	// subject's schema: the registered one, else its latest version.
	Wire bool
}

func schemaFlags(fs *flag.FlagSet) func(topic string) schemaConfig {
	client := registryio.ClientFlags(fs)
	register := fs.String("register-schema", "", "JSON Schema file to register under --schema-subject at start (needs --schema-registry)")
	wire := fs.Bool("wire-format", false, "write Confluent's wire format (magic byte, schema id, JSON) with the subject's schema id (needs --schema-registry)")
	return func(topic string) schemaConfig {
		return schemaConfig{Registry: client(topic), RegisterFile: *register, Wire: *wire}
	}
}

func (c schemaConfig) validate() error {
	if c.Registry.URL == "" {
		switch {
		case c.RegisterFile != "":
			return errors.New("--register-schema: needs --schema-registry")
		case c.Wire:
			return errors.New("--wire-format: needs --schema-registry")
		}
		return nil
	}
	if err := registryio.CheckFlags(c.Registry); err != nil {
		return err
	}
	if c.RegisterFile != "" {
		if _, err := os.Stat(c.RegisterFile); err != nil {
			return fmt.Errorf("--register-schema=%s: %v", c.RegisterFile, err)
		}
	}
	return nil
}

// setupSchema registers the schema file, if any, and returns the schema id
// to write in the wire format (0: plain JSON).
func setupSchema(ctx context.Context, c schemaConfig, timeout time.Duration) (int, error) {
	if c.Registry.URL == "" {
		return 0, nil
	}
	reg := c.Registry
	reg.Wait = timeout
	res, err := registryio.NewResolver(reg)
	if err != nil {
		return 0, fmt.Errorf("--schema-registry: %w", err)
	}
	id := 0
	if c.RegisterFile != "" {
		text, err := os.ReadFile(c.RegisterFile)
		if err != nil {
			return 0, fmt.Errorf("--register-schema=%s: %v", c.RegisterFile, err)
		}
		if _, err := registryio.Compile(0, string(text)); err != nil {
			return 0, fmt.Errorf("--register-schema=%s: %v", c.RegisterFile, err)
		}
		if id, err = registryio.Register(ctx, res, reg.Subject, string(text)); err != nil {
			return 0, fmt.Errorf("--register-schema=%s: %w", c.RegisterFile, err)
		}
	}
	if !c.Wire {
		return 0, nil
	}
	if id == 0 {
		s, err := res.Latest(ctx)
		if err != nil {
			return 0, fmt.Errorf("--wire-format: the latest schema of %s: %w", reg.Subject, err)
		}
		id = s.ID
	}
	return id, nil
}
