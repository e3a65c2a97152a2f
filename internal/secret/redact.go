package secret

import "net/url"

// RedactURI returns uri with its password, if it has one, replaced by
// "xxxxx" (url.URL.Redacted), for messages and logs: a postgres:// catalog
// URI often carries one. A URI that does not parse, or has no password, is
// returned as it is.
func RedactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	if _, ok := u.User.Password(); !ok {
		return uri
	}
	return u.Redacted()
}
