package kafkaio

import (
	"encoding/json"
	"os"

	"github.com/haade/haade/internal/secret"
)

// A worker reads the SASL password from HAADE_KAFKA_SASL_PASSWORD (which
// also sets --kafka-sasl-password), else from the file
// HAADE_KAFKA_SASL_PASSWORD_FILE names (a mounted Secret), else from
// HAADE_SASL_PASSWORD, the name earlier versions read. A serialized Config
// (in the read's DoFn, the job server and the Flink job graph) holds no
// password; ClientFlags and Read export it to the workers of this process
// (internal/secret).
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
