package kafkaio

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrNotAuthorized is returned at construction when the brokers answered
// but refused this client: a failed SASL authentication, or ACLs that do
// not let its principal describe or read the topic. Reported as brokers
// that cannot be reached, it sent users after the network.
var ErrNotAuthorized = errors.New("kafkaio: not authorized")

// principal is how the brokers name this client in their ACLs.
func (c Config) principal() string {
	if c.SASLMechanism != "" {
		return "User:" + c.SASLUser
	}
	if c.TLSCertFile != "" {
		return "the TLS client certificate's subject"
	}
	return "User:ANONYMOUS"
}

// authzError returns err as ErrNotAuthorized, naming the principal and what
// was refused, when it is a Kafka refusal; else nil.
func authzError(cfg Config, op string, err error) error {
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState), errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Errorf("%w: %s: SASL %s authentication of %s failed (check --kafka-sasl-user, --kafka-sasl-mechanism and the password): %v",
			ErrNotAuthorized, op, cfg.SASLMechanism, cfg.principal(), err)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Errorf("%w: %s: principal %s may not describe or read topic %q (Kafka ACLs: grant Describe and Read on the topic): %v",
			ErrNotAuthorized, op, cfg.principal(), cfg.Topic, err)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("%w: %s: principal %s is refused a cluster operation (Kafka ACLs): %v", ErrNotAuthorized, op, cfg.principal(), err)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Errorf("%w: %s: principal %s may not use its consumer group (Kafka ACLs: grant Read on the group): %v", ErrNotAuthorized, op, cfg.principal(), err)
	}
	return nil
}
