package kafkaio

import (
	"flag"
	"strings"
)

// ClientFlags defines the Kafka connection flags every HAADE command shares
// (--brokers, --topic, --kafka-tls*, --kafka-sasl-*), with brokersUsage
// saying what empty --brokers means for this command, and returns a func
// that reads them into a Config after the flag set is parsed.
func ClientFlags(fs *flag.FlagSet, brokersUsage string) func() Config {
	brokers := fs.String("brokers", "", brokersUsage)
	topic := fs.String("topic", "fintech.debt.raw", "Kafka topic")
	tls := fs.Bool("kafka-tls", false, "connect to Kafka with TLS")
	tlsCA := fs.String("kafka-tls-ca", "", "PEM file of the CA that signed the brokers' certificates")
	tlsCert := fs.String("kafka-tls-cert", "", "PEM client certificate, for mutual TLS")
	tlsKey := fs.String("kafka-tls-key", "", "PEM client key, for mutual TLS")
	tlsSkip := fs.Bool("kafka-tls-insecure-skip-verify", false, "do not verify the brokers' certificates")
	saslMech := fs.String("kafka-sasl-mechanism", "", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	saslUser := fs.String("kafka-sasl-user", "", "SASL user")
	saslPass := fs.String("kafka-sasl-password", "", "SASL password (better: HAADE_KAFKA_SASL_PASSWORD)")
	return func() Config {
		c := Config{Topic: *topic, TLS: *tls, TLSCAFile: *tlsCA, TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey,
			TLSInsecureSkipVerify: *tlsSkip, SASLMechanism: strings.ToUpper(*saslMech), SASLUser: *saslUser,
			SASLPassword: *saslPass}
		c.exportPassword()
		for _, b := range strings.Split(*brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				c.Brokers = append(c.Brokers, b)
			}
		}
		return c
	}
}
