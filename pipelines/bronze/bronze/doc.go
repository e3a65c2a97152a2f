// Package bronze is the bronze pipeline as a library: its Config and flags,
// the plan of its Kafka read from the tables' offsets, and the wiring
// (Kafka, parse, enrich, Iceberg). The command pipelines/bronze, its tests
// and the benchmark (testing/benchmark) all build the pipeline through
// Build, so what they run and measure is the same pipeline.
//
//	p, s := beam.NewPipelineWithRoot()
//	pl, err := bronze.Build(ctx, s, cfg)
//	... runners.Run(ctx, cfg.Runner, p), then bronze.TableStats and
//	bronze.CheckComplete for a bounded run.
package bronze
