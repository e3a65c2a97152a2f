package parse

import "github.com/prometheus/client_golang/prometheus"

// The Prometheus metrics of this package.
var (
	recordsParsed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "haade_records_parsed_total", Help: "Records parsed into rows.",
	})
	deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_dead_letters_total", Help: "Records sent to the dead-letter table, by class of reason.",
	}, []string{"reason"})
)

// Collectors returns this package's Prometheus collectors. A command
// registers them with the registry it serves (runners/obs.MustRegister);
// the package never registers them itself.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{recordsParsed, deadLetters}
}
