package lineage

import (
	"os"
	"regexp"
	"strings"

	"github.com/haade/haade/internal/secret"
)

// secretEnv are the variables whose values never appear in an event: the
// catalog and Kafka passwords, the S3 secret key, the lineage API key.
var secretEnv = []string{
	"HAADE_CATALOG_PASSWORD", "HAADE_KAFKA_SASL_PASSWORD", "HAADE_SASL_PASSWORD",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", EnvAPIKey,
}

// EnvAPIKey holds the bearer token for an HTTP endpoint (APIKey); it is a
// variable, not a flag, so that it stays out of process listings.
const EnvAPIKey = "HAADE_LINEAGE_API_KEY"

var uriPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// Redact returns msg with the password of every URI in it masked
// (secret.RedactURI), and with the value of every secret variable
// (HAADE_CATALOG_PASSWORD, HAADE_KAFKA_SASL_PASSWORD, AWS_SECRET_ACCESS_KEY,
// ...) and of each of secrets replaced by "xxxxx".
func Redact(msg string, secrets ...string) string {
	msg = uriPattern.ReplaceAllStringFunc(msg, secret.RedactURI)
	for _, env := range secretEnv {
		secrets = append(secrets, os.Getenv(env))
	}
	for _, s := range secrets {
		if len(s) >= 3 { // a one- or two-letter "secret" would mask half the message
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}
