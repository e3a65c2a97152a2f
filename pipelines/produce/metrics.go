package main

import "github.com/prometheus/client_golang/prometheus"

// The metrics of the producer, the event producer. Records and bytes
// count what the brokers acknowledged.
var (
	producedRecords = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_produced_records_total", Help: "Records the brokers acknowledged, per topic and kind (valid or malformed).",
	}, []string{"topic", "kind"})
	producedBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_produced_bytes_total", Help: "Bytes of record values the brokers acknowledged, per topic.",
	}, []string{"topic"})
	produceErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "haade_produce_errors_total", Help: "Records that could not be produced, per topic.",
	}, []string{"topic"})
	produceLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "haade_produce_ack_seconds", Help: "Time from handing a record to the client to its acknowledgement.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	}, []string{"topic"})
	produceTargetRate = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "haade_produce_target_rate", Help: "Events per second the producer aims at (0: as fast as possible).",
	}, []string{"topic"})
)
