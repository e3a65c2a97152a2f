package kafkaio

import (
	"encoding/json"
	"os"

	"github.com/haade/haade/internal/secret"
)

// The environment variables a worker reads the SASL password from. The
// password never travels inside the pipeline: a serialized Config (in the
// read's DoFn, and so in the job server and the Flink job graph) has none,
// and the worker takes it from its own environment:
//
//   - HAADE_KAFKA_SASL_PASSWORD, the password itself (the variable that
//     also sets --kafka-sasl-password);
//   - else HAADE_KAFKA_SASL_PASSWORD_FILE, a file that holds it (a mounted
//     Secret), trailing white space trimmed;
//   - else HAADE_SASL_PASSWORD, the name earlier versions read.
//
// The process that builds the pipeline exports a Config's password for the
// workers that run in it (Prism, Flink LOOPBACK): ClientFlags and Read do,
// through internal/secret, and no environment variable changes.
const (
	EnvSASLPassword     = "HAADE_KAFKA_SASL_PASSWORD"
	EnvSASLPasswordFile = "HAADE_KAFKA_SASL_PASSWORD_FILE"
	envOldSASLPassword  = "HAADE_SASL_PASSWORD"
)

// MarshalJSON encodes the config without its SASL password. It has no
// other effect.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without this method
	c.SASLPassword = ""
	return json.Marshal(plain(c))
}

// exportPassword makes the password known to the workers of this process
// (see internal/secret.Export).
func (c Config) exportPassword() { secret.Export(EnvSASLPassword, c.SASLPassword) }

// saslPassword is the password to log in with: the config's, else the
// worker's environment's.
func (c Config) saslPassword() string {
	if c.SASLPassword != "" {
		return c.SASLPassword
	}
	// As before the one reader: a file that cannot be read falls through
	// to the old name (the login then fails as unauthenticated); a readable
	// file, even an empty one, is the answer.
	pw, err := secret.FromEnv(EnvSASLPassword, EnvSASLPasswordFile)
	if err == nil && (pw != "" || os.Getenv(EnvSASLPasswordFile) != "") {
		return pw
	}
	return os.Getenv(envOldSASLPassword)
}
