package icebergio

import (
	"encoding/json"
	"net/url"
	"os"
	"sync"

	"github.com/haade/haade/io/internal/secret"
)

// The environment variables a worker reads the catalog password from. The
// password never travels inside the pipeline: when a CatalogConfig is
// serialized (into a DoFn, and so into the job server, the Flink job graph
// and its HA storage), the password is cut from its URI, and the worker
// that opens the catalog takes it from its own environment instead:
//
//   - HAADE_CATALOG_PASSWORD, the password itself;
//   - else HAADE_CATALOG_PASSWORD_FILE, a file that holds it (a mounted
//     Secret), trailing white space trimmed;
//   - else the password of HAADE_CATALOG_URI, when that URI has the same user
//     and host (the variable that sets --catalog-uri).
//
// In the process that builds the pipeline, serializing a config with a
// password sets HAADE_CATALOG_PASSWORD when it is unset, so that workers in
// that process (Prism, Flink LOOPBACK) find it.
const (
	EnvCatalogPassword     = "HAADE_CATALOG_PASSWORD"
	EnvCatalogPasswordFile = "HAADE_CATALOG_PASSWORD_FILE"
	envCatalogURI          = "HAADE_CATALOG_URI"
)

var exportMu sync.Mutex

// MarshalJSON encodes the config with the password cut from URI.
func (c CatalogConfig) MarshalJSON() ([]byte, error) {
	type plain CatalogConfig // without this method
	if u, err := url.Parse(c.URI); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			exportMu.Lock()
			if os.Getenv(EnvCatalogPassword) == "" {
				_ = os.Setenv(EnvCatalogPassword, pw)
			}
			exportMu.Unlock()
			u.User = url.User(u.User.Username())
			c.URI = u.String()
		}
	}
	return json.Marshal(plain(c))
}

// withPassword returns c with the password from the environment put back
// into a URI that has a user and no password.
func (c CatalogConfig) withPassword() CatalogConfig {
	u, err := url.Parse(c.URI)
	if err != nil || u.User == nil || u.Scheme == "" {
		return c
	}
	if _, ok := u.User.Password(); ok {
		return c
	}
	pw, _ := secret.FromEnv(EnvCatalogPassword, EnvCatalogPasswordFile) // unreadable file: as if unset
	if pw == "" {
		if e, err := url.Parse(os.Getenv(envCatalogURI)); err == nil && e.User != nil &&
			e.User.Username() == u.User.Username() && e.Host == u.Host {
			pw, _ = e.User.Password()
		}
	}
	if pw == "" {
		return c
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	c.URI = u.String()
	return c
}
