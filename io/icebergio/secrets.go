package icebergio

import (
	"encoding/json"
	"net/url"
	"os"

	"github.com/haade/haade/internal/secret"
)

// A worker reads the catalog password from HAADE_CATALOG_PASSWORD, else from
// the file HAADE_CATALOG_PASSWORD_FILE names (a mounted Secret), else from
// HAADE_CATALOG_URI when that URI has the same user and host. A serialized
// CatalogConfig (in a DoFn, the job server, the Flink job graph and its HA
// storage) holds no password; CatalogFlags, Open, Write and OverwriteDays
// export it to the workers of this process (internal/secret).
const (
	EnvCatalogPassword     = "HAADE_CATALOG_PASSWORD"
	EnvCatalogPasswordFile = "HAADE_CATALOG_PASSWORD_FILE"
	envCatalogURI          = "HAADE_CATALOG_URI"
)

// MarshalJSON encodes the config with the password cut from URI. It has no
// other effect.
func (c CatalogConfig) MarshalJSON() ([]byte, error) {
	type plain CatalogConfig // without this method
	c.URI, _ = cutPassword(c.URI)
	return json.Marshal(plain(c))
}

// cutPassword returns uri without the password of its user info, and the
// password; uri itself and "" when it has none.
func cutPassword(uri string) (string, string) {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri, ""
	}
	pw, ok := u.User.Password()
	if !ok {
		return uri, ""
	}
	u.User = url.User(u.User.Username())
	return u.String(), pw
}

// exportPassword makes the password of URI known to the workers of this
// process (see internal/secret.Export).
func (c CatalogConfig) exportPassword() {
	_, pw := cutPassword(c.URI)
	secret.Export(EnvCatalogPassword, pw) // an empty password exports nothing
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
