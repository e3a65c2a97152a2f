package obs

import (
	"regexp"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	mu         sync.Mutex
	registered []prometheus.Collector
)

// MustRegister registers HAADE collectors (those of kafkaio, parse and
// icebergio, each package's Collectors()) with Registry, and remembers them
// for MetricNames. It panics on a duplicate, as prometheus.MustRegister
// does. Every command calls it for the packages it runs, before beam.Init,
// so that worker processes export the same series.
func MustRegister(cs ...prometheus.Collector) {
	mu.Lock()
	defer mu.Unlock()
	Registry.MustRegister(cs...)
	registered = append(registered, cs...)
}

// fqName reads a metric's name from its Desc: client_golang exports no
// accessor for it, and Gather only shows series that have a value.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames lists the names of the metrics registered with MustRegister,
// as exposed (a histogram also exposes _bucket, _sum and _count series).
func MetricNames() []string {
	mu.Lock()
	cs := append([]prometheus.Collector(nil), registered...)
	mu.Unlock()
	var out []string
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range cs {
			c.Describe(ch)
		}
		close(ch)
	}()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}
