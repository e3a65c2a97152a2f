package registryio

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/haade/haade/internal/secret"
)

// The environment variables a worker reads the registry password from. The
// password never travels inside the pipeline: a serialized Config has none
// (see MarshalJSON), and there is no flag for it:
//
//   - HAADE_SCHEMA_REGISTRY_PASSWORD, the password itself;
//   - else HAADE_SCHEMA_REGISTRY_PASSWORD_FILE, a file that holds it (a
//     mounted Secret), trailing white space trimmed.
const (
	EnvPassword     = "HAADE_SCHEMA_REGISTRY_PASSWORD"
	EnvPasswordFile = "HAADE_SCHEMA_REGISTRY_PASSWORD_FILE"
)

// Config says where the registry is and what to do with it. It is
// serialised into the pipeline (the parse DoFn carries it), so every field
// is plain data and the password is never in it.
type Config struct {
	// URL is the registry's Confluent-compatible base URL, for example
	// http://127.0.0.1:8091/apis/ccompat/v7 for Apicurio. Empty: no registry.
	URL string
	// User is the basic-auth user; the password comes from EnvPassword or
	// EnvPasswordFile. Default: no authentication.
	User string
	// Subject is the subject whose latest version checks plain JSON events
	// (events without the wire-format header). Default "<topic>-value".
	Subject string
	// Validate checks each event against its JSON Schema; a violation is a
	// dead letter. Default false: ids are resolved (an unknown id still
	// waits) but events are not checked.
	Validate bool
	// Wait bounds how long one lookup retries while the registry is away or
	// does not know a schema id, before the lookup fails loudly. Default 5m.
	Wait time.Duration
	// LatestTTL is how long the subject's latest version is kept before it is
	// asked for again. Default 1m.
	LatestTTL time.Duration

	// Password is for this process only: it is never serialized (see
	// MarshalJSON), so workers in other processes read EnvPassword. No flag
	// sets it.
	Password string
}

// WithPassword returns c with Password set.
func (c Config) WithPassword(p string) Config {
	c.Password = p
	return c
}

// MarshalJSON encodes the config without its password. It has no other
// effect: Events exports the password for the workers of the process that
// builds the pipeline (Prism, Flink LOOPBACK), through internal/secret.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without this method
	c.Password = ""
	return json.Marshal(plain(c))
}

// password is the password to log in with: the config's, else the
// worker's environment's, else the file EnvPasswordFile names.
func (c Config) password() (string, error) {
	if c.Password != "" {
		return c.Password, nil
	}
	return secret.FromEnv(EnvPassword, EnvPasswordFile)
}

func (c Config) withDefaults() Config {
	if c.Wait <= 0 {
		c.Wait = 5 * time.Minute
	}
	if c.LatestTTL <= 0 {
		c.LatestTTL = time.Minute
	}
	return c
}

// Check checks the configuration; its errors name no flag (the caller
// does) and never hold a password.
func (c Config) Check() error {
	if c.URL == "" {
		if c.Validate {
			return errors.New("checking events needs a registry URL")
		}
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want http(s)://host:port/path, got %q", Redact(c.URL))
	}
	if u.User != nil {
		return errors.New("the URL must not hold credentials: give the user with --schema-registry-user and the password in " + EnvPassword)
	}
	if c.Subject == "" {
		return errors.New("empty subject")
	}
	return nil
}

// Redact returns a URL with any password in it replaced.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
