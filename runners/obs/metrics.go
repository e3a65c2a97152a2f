package obs

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// MetricNames lists the names of the metrics registered with MustRegister,
// as exposed (a histogram also exposes _bucket, _sum and _count series).
//
// client_golang has no accessor for a Desc's name, and Gather shows only
// series that have a value (a vector with no child yet shows nothing). So
// MetricNames gathers a registry of its own that holds one placeholder
// value per Desc the collectors describe, and reads the names that
// Gather gives the families (MetricFamily.GetName). An unchecked collector
// (one that describes nothing, such as kafkaio's franz-go client metrics)
// has no name here.
func MetricNames() []string {
	mu.Lock()
	cs := append(descsOf(nil), registered...)
	mu.Unlock()
	return namesOf(cs)
}

func namesOf(cs descsOf) []string {
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs)
	mfs, _ := reg.Gather() // a family Gather refuses (two helps for one name) is left out
	out := make([]string, 0, len(mfs))
	for _, mf := range mfs {
		out = append(out, mf.GetName())
	}
	return out
}

// descsOf is an unchecked collector that collects, for each Desc that its
// collectors describe, one placeholder (an untyped 0 with a label that
// tells it apart from other placeholders of the same name).
type descsOf []prometheus.Collector

func (descsOf) Describe(chan<- *prometheus.Desc) {}

func (cs descsOf) Collect(ch chan<- prometheus.Metric) {
	descs := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range cs {
			c.Describe(descs)
		}
		close(descs)
	}()
	i := 0
	for d := range descs {
		ch <- placeholder{d, strconv.Itoa(i)}
		i++
	}
}

type placeholder struct {
	desc *prometheus.Desc
	id   string
}

func (p placeholder) Desc() *prometheus.Desc { return p.desc }

func (p placeholder) Write(m *dto.Metric) error {
	name, zero := "placeholder", 0.0
	m.Label = []*dto.LabelPair{{Name: &name, Value: &p.id}}
	m.Untyped = &dto.Untyped{Value: &zero}
	return nil
}
