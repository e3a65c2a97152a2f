package registryio

import (
	"flag"
	"fmt"
)

// ClientFlags defines --schema-registry, --schema-registry-user and
// --schema-subject on fs, and returns a func that builds the Config for a
// topic once fs is parsed. There is no password flag: the password comes
// from EnvPassword or EnvPasswordFile only.
func ClientFlags(fs *flag.FlagSet) func(topic string) Config {
	u := fs.String("schema-registry", "", "Confluent-compatible schema registry URL (e.g. http://127.0.0.1:8091/apis/ccompat/v7); empty: plain JSON only; the password comes from "+EnvPassword+"(_FILE) only")
	user := fs.String("schema-registry-user", "", "schema registry basic-auth user")
	subject := fs.String("schema-subject", "", "registry subject of the events; empty: <topic>-value")
	return func(topic string) Config {
		c := Config{URL: *u, User: *user, Subject: *subject}
		if c.Subject == "" {
			c.Subject = topic + "-value"
		}
		return c
	}
}

// CheckFlags checks c and names the flag at fault.
func CheckFlags(c Config) error {
	if err := c.Check(); err != nil {
		if c.URL == "" {
			return fmt.Errorf("--validate-schema: %v (--schema-registry)", err)
		}
		return fmt.Errorf("--schema-registry=%s: %v", Redact(c.URL), err)
	}
	return nil
}
