package bronze

import (
	"flag"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/haade/haade/io/registryio"
	"github.com/haade/haade/transforms/parse"
)

// registryFlags defines the schema registry's flags: those of
// registryio.ClientFlags plus --validate-schema and --schema-registry-wait.
func registryFlags(fs *flag.FlagSet) func(topic string) registryio.Config {
	client := registryio.ClientFlags(fs)
	validate := fs.Bool("validate-schema", false, "check each event against its JSON Schema in --schema-registry; a violation is a dead letter naming the rule")
	wait := fs.Duration("schema-registry-wait", 5*time.Minute, "how long a lookup waits for a registry that is away or does not know a schema id, before bronze fails (nothing is dead-lettered for it)")
	return func(topic string) registryio.Config {
		c := client(topic)
		if c.URL == "" && !*validate {
			// No registry: the zero Config, as before these flags existed.
			return registryio.Config{}
		}
		c.Validate, c.Wait = *validate, *wait
		return c
	}
}

// parseEvents is parse.Events, or registryio.Events when a registry
// is configured: without one, plain JSON keeps the hand-tuned parser alone.
func parseEvents(s beam.Scope, records beam.PCollection, reg registryio.Config, opts ...parse.Option) (good, bad beam.PCollection) {
	if reg.URL == "" {
		return parse.Events(s, records, opts...)
	}
	return registryio.Events(s, records, reg, opts...)
}
