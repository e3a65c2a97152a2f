package runners

import (
	"flag"
	"time"
)

// Flags of --runner=flink. Like Beam's own (--endpoint, --async,
// --parallelism, --job_name), they are defined on flag.CommandLine, so
// NewFlagSet gives them to every pipeline and HAADE_<FLAG> sets them.
var (
	// FlinkRESTFlag is the JobManager's REST API. When set, submission asks it
	// whether the job already runs, --async waits on it, and a stop cancels
	// the Flink job through it: Beam's job server cannot (FlinkREST).
	FlinkRESTFlag = flag.String("flink-rest", "", "Flink's REST API, e.g. http://flink-jobmanager:8081: a job reported running only once every task runs, the default parallelism capped by a standalone cluster's free slots, idempotent submission that survives a job server restart, and stops that really stop the Flink job (--runner=flink)")
	// ReplaceFlag cancels a running Flink job of the same name, then submits.
	ReplaceFlag = flag.Bool("replace", false, "with --flink-rest: cancel a running Flink job of this pipeline's name, then submit (default: say it runs and exit 0; without --flink-rest the job server's list of jobs says whether it runs)")
	// CancelFlag cancels the running Flink job of this pipeline and exits:
	// the stop of a job submitted with --async.
	CancelFlag = flag.Bool("cancel", false, "with --runner=flink --flink-rest: cancel the running Flink job of this pipeline's name (waiting until Flink has stopped it) instead of submitting")
	// MaxBundleTimeFlag is Beam's max_bundle_time_mills for Flink: how long a
	// bundle may last. Flink's default (1 s) leaves each Kafka partition
	// reading a fraction of the time (testing/services/FLINK.md).
	MaxBundleTimeFlag = flag.Duration("flink-max-bundle-time", DefaultMaxBundleTime, "longest bundle on Flink (Beam's max_bundle_time_mills)")
	// FlinkClusterClasspathFlag says that the cluster's JVMs have the job
	// server's Beam jars on their class path: the job server then ships
	// none of them with the job (FlinkOptions.NoStagedJars).
	FlinkClusterClasspathFlag = flag.Bool("flink-cluster-classpath", false, "the Flink cluster has the job server's Beam jars on its class path (testing/services/flinkcluster.sh with FLINKC_BEAM_CLASSPATH=1): the job server ships none with the job (--runner=flink)")
	// AsyncWaitFlag bounds how long a submission waits for the job to run:
	// --async, and a synchronous run with --flink-rest.
	AsyncWaitFlag = flag.Duration("async-wait", 5*time.Minute, "how long --async (and, with --flink-rest, a synchronous run) waits for every task of the Flink job to be RUNNING; then the job is cancelled and the command exits 1 naming the cause")
)

// DefaultMaxBundleTime is --flink-max-bundle-time's default (measured in
// testing/services/FLINK.md).
const DefaultMaxBundleTime = 250 * time.Millisecond
