package kafkaio

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/haade/haade/io/internal/secret"
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
// In the process that builds the pipeline, serializing a Config with a
// password sets HAADE_KAFKA_SASL_PASSWORD when it is unset, so that workers
// in that process (Prism, Flink LOOPBACK) find it.
const (
	EnvSASLPassword     = "HAADE_KAFKA_SASL_PASSWORD"
	EnvSASLPasswordFile = "HAADE_KAFKA_SASL_PASSWORD_FILE"
	envOldSASLPassword  = "HAADE_SASL_PASSWORD"
)

var exportMu sync.Mutex

// MarshalJSON encodes the config without its SASL password.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without this method
	if c.SASLPassword != "" {
		exportMu.Lock()
		if os.Getenv(EnvSASLPassword) == "" {
			_ = os.Setenv(EnvSASLPassword, c.SASLPassword)
		}
		exportMu.Unlock()
		c.SASLPassword = ""
	}
	return json.Marshal(plain(c))
}

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
