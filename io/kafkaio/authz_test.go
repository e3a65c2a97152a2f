package kafkaio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker that answers but refuses this client (its ACLs, its SASL
// password; kfake only closes the connection on a wrong password, so that
// case is left to the e2e tier) is "not authorized", naming the principal and the topic; it is
// not "brokers unreachable".
func TestRefusalsSayNotAuthorized(t *testing.T) {
	const secret = "topic-secret"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic, secret),
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "reader", "reader-pw",
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true},
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationRead, Allow: true}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	base := Config{Brokers: c.ListenAddrs(), Topic: topic, SASLMechanism: "PLAIN", SASLUser: "reader", SASLPassword: "reader-pw"}
	if _, err := planOnce(context.Background(), base, PlanOpts{Bounded: true}, 10*time.Second); err != nil {
		t.Fatalf("the reader on its own topic: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  func(Config) Config
		want []string
	}{
		{"another topic", func(c Config) Config { c.Topic = secret; return c }, []string{"not authorized", "User:reader", `"` + secret + `"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg(base)
			start := time.Now()
			_, err := planOnce(context.Background(), cfg, PlanOpts{Bounded: true}, 10*time.Second)
			if !errors.Is(err, ErrNotAuthorized) || errors.Is(err, ErrUnreachable) {
				t.Fatalf("err = %v, want ErrNotAuthorized and not ErrUnreachable", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), cfg.SASLPassword) {
				t.Errorf("error shows the password: %v", err)
			}
			if took := time.Since(start); took > 9*time.Second {
				t.Errorf("took %v: a refusal is final, not retried until the timeout", took)
			}
		})
	}
}
