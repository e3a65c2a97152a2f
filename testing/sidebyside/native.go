package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/haade/haade/internal/secret"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/runners"
	"github.com/haade/haade/transforms/tables"
)

// The native contender: Apache Iceberg's own Flink sink, as a Flink user
// runs it. One Flink SQL script (nativeScript), submitted by Flink's SQL
// client (testing/services/flinknative.sh sql-client -f) to the same
// standalone Flink 1.19 cluster as the flink contender's
// (testing/services/flinkcluster.sh, started with FLINKC_NATIVE_CLASSPATH=1,
// which puts Iceberg's Flink runtime, the Kafka SQL connector, Hadoop's
// client, S3FileIO and the PostgreSQL driver on the JVMs' class path):
//
//   - a Kafka table over the run's topic from its earliest offsets,
//     unbounded, JSON parsed by Flink's json format, the Kafka coordinates
//     from the connector's metadata columns;
//   - Iceberg's catalog `local` (JdbcCatalog on the same PostgreSQL, in the
//     layout bronze's catalog writes, S3FileIO on the same MinIO);
//   - INSERT INTO the run's table, which the harness made before the clock
//     with bronze's own schema and partitioning (tables.Bronze): Flink's
//     CREATE TABLE cannot say day(ingested_at), only identity partitions.
//
// The Flink checkpoint interval is the commit interval: Iceberg's sink
// commits once per checkpoint, so the two contenders commit equally often.
// The parallelism is the topic's partition count, as bronze's on Flink.
// With 'table.dml-sync' the client lives as long as the job. The job is a
// streaming one, as a Flink user runs ingestion, and the harness stops it
// as it stops bronze on Prism: once every row is visible, it cancels the
// Flink job (stop), and the client exits.
//
// Not bounded ('scan.bounded.mode'), because Iceberg 1.10.0's FlinkSink
// loses rows when a bounded streaming job's writers end their input at
// different times: each writer sends its last files tagged with the
// checkpoint id Long.MAX_VALUE (IcebergStreamWriter.endInput), the
// committer's snapshotState files them under that id in
// dataFilesPerCheckpoint, and the next snapshotState, or the committer's
// own endInput, puts the next writers' end-of-input files under the same
// key, replacing the earlier manifest, which is never committed
// (IcebergFilesCommitter.writeToManifestUptoLatestCheckpoint). Seen here
// in 3 of 4 runs of 100k events on a warm cluster and, at a 200 ms commit
// interval, in 2 of 3 runs of 1M events (in one, checkpoints 3 and 4
// committed 7 and 5 files of 8 writers, the table lacked the rest, and
// three end-of-input manifests, ...-9223372036854775807-0000{3,5,7}.avro,
// stayed in its metadata, never committed; testing/services/FLINK.md).
//
// CPU and RSS are the SQL client's (the harness's child) and the cluster's
// JobManager's and TaskManagers' from launch; Beam's job server, idle here,
// is left out.

// nativePrelude starts both of the native contender's scripts (nativeScript,
// nativeUpsertScript): the job's settings and Iceberg's catalog. Its fields
// are nativeParams'.
var nativePrelude = template.Must(template.New("prelude").Parse(`SET 'pipeline.name' = '{{.Job}}';
SET 'parallelism.default' = '{{.Parallelism}}';
SET 'execution.runtime-mode' = 'streaming';
SET 'execution.checkpointing.interval' = '{{.Interval}}';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'state.checkpoints.dir' = 's3://warehouse/checkpoints/native';
SET 'table.dml-sync' = 'true';
SET 'table.local-time-zone' = 'UTC';

CREATE CATALOG ` + "`local`" + ` WITH (
  'type' = 'iceberg',
  'catalog-impl' = 'org.apache.iceberg.jdbc.JdbcCatalog',
  'uri' = '{{.JDBC}}',
  'jdbc.user' = '{{.User}}',
  'jdbc.password' = '{{.Password}}',
  'jdbc.schema-version' = 'V1',
  'warehouse' = '{{.Warehouse}}',
  'io-impl' = 'org.apache.iceberg.aws.s3.S3FileIO',
  's3.endpoint' = '{{.S3Endpoint}}',
  's3.path-style-access' = 'true',
  's3.access-key-id' = '{{.AccessKey}}',
  's3.secret-access-key' = '{{.SecretKey}}',
  'client.region' = '{{.Region}}'
);
`))

// nativeScript is the Flink SQL the contender runs. Its fields are
// nativeParams'.
var nativeScript = template.Must(template.Must(nativePrelude.Clone()).New("native.sql").Parse(`-- The side-by-side harness's native contender: Iceberg's own Flink sink
-- (testing/sidebyside/native.go), run with testing/services/flinknative.sh sql-client -f.
{{template "prelude" .}}
CREATE TEMPORARY TABLE kafka_events (
  ` + "`source`" + ` STRING,
  ` + "`title`" + ` STRING,
  ` + "`timestamp`" + ` TIMESTAMP_LTZ(6),
  kafka_topic STRING METADATA FROM 'topic' VIRTUAL,
  kafka_partition INT METADATA FROM 'partition' VIRTUAL,
  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL,
  kafka_timestamp TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  kafka_timestamp_type STRING METADATA FROM 'timestamp-type' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = '{{.Topic}}',
  'properties.bootstrap.servers' = '{{.Brokers}}',
  'properties.group.id' = '{{.Job}}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.fail-on-missing-field' = 'false',
  'json.ignore-parse-errors' = 'false'
);

INSERT INTO ` + "`local`.`{{.Namespace}}`.`{{.Table}}`" + `
  (` + "`source`, `title`, `timestamp`" + `, ingested_at, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, kafka_timestamp_type)
SELECT ` + "`source`, `title`, `timestamp`" + `, CURRENT_TIMESTAMP, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp, kafka_timestamp_type
FROM kafka_events;
`))

// nativeParams fill nativeScript.
type nativeParams struct {
	Job         string
	Parallelism int
	// Interval is the checkpoint interval in Flink's duration syntax.
	Interval                      string
	JDBC, User, Password          string
	Warehouse, S3Endpoint, Region string
	AccessKey, SecretKey          string
	Topic, Brokers                string
	Namespace, Table              string
}

// nativeSQL is the run's Flink SQL script: nativeScript, or with --keys
// nativeUpsertScript.
func nativeSQL(r trial) (string, error) {
	u, err := url.Parse(catalogURI)
	if err != nil || u.User == nil {
		return "", fmt.Errorf("catalog URI %q: want postgres://user:password@host/db", secret.RedactURI(catalogURI))
	}
	pw, _ := u.User.Password()
	ns, table, ok := strings.Cut(r.table, ".")
	if !ok || strings.Contains(table, ".") {
		return "", fmt.Errorf("table %q: want namespace.table", r.table)
	}
	p := nativeParams{
		Job:         flinkJobName(r),
		Parallelism: r.cfg.Partitions,
		Interval:    fmt.Sprintf("%dms", r.cfg.CommitInterval.Milliseconds()),
		JDBC:        "jdbc:postgresql://" + u.Host + u.Path,
		User:        u.User.Username(), Password: pw,
		Warehouse: warehouse, S3Endpoint: s3Endpoint, Region: os.Getenv("AWS_REGION"),
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"), SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		Topic: r.topic, Brokers: brokers,
		Namespace: ns, Table: table,
	}
	// Every value goes between single quotes or backquotes: none may hold one.
	for _, v := range []string{p.Job, p.JDBC, p.User, p.Password, p.Region, p.AccessKey, p.SecretKey, p.Topic, p.Namespace, p.Table} {
		if strings.ContainsAny(v, "'`") {
			return "", fmt.Errorf("%q: a quote cannot go into the Flink SQL script", v)
		}
	}
	script := nativeScript
	if r.cfg.Keys > 0 {
		script = nativeUpsertScript // native_upsert.go
	}
	var b bytes.Buffer
	if err := script.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}

// nativePrepare makes the run's table with bronze's schema and partitioning
// (unless --keys: the upsert script makes its own) and writes the script, before the clock starts, and makes sure no job of
// the run outlives it.
func nativePrepare(r trial) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The upsert table is the script's own (native_upsert.go).
	if r.cfg.Keys == 0 {
		if _, err := icebergio.EnsureTable(ctx, r.cat, tables.Bronze.As(r.table)); err != nil {
			return fmt.Errorf("create %s: %w", r.table, err)
		}
	}
	sql, err := nativeSQL(r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.dir, "native.sql"), []byte(sql), 0o600); err != nil {
		return err
	}
	return flinkPrepare(r) // no Flink job of the run outlives it
}

// nativeCommand runs the script in Flink's SQL client. The script ends in
// exec: the harness's child becomes the client's JVM.
func nativeCommand(r trial) (*exec.Cmd, error) {
	return exec.Command("bash", filepath.Join(r.root, "testing/services/flinknative.sh"), "sql-client",
		"-f", filepath.Join(r.dir, "native.sql")), nil
}

// nativePIDs are the cluster's JobManager and TaskManagers: the SQL client
// is the harness's child, and Beam's job server takes no part.
func nativePIDs(trial) []int { return pidsOf(clusterJVMs) }

var nativeContender = contender{
	name:    "native",
	command: nativeCommand,
	prepare: nativePrepare,
	health:  flinkHealth,
	pids:    nativePIDs,
	after: func(r trial, res *Result) {
		res.FlinkJobSeconds, res.FlinkJobState = flinkJobSeconds(r)
	},
	stop:     nativeStop,
	caughtUp: groupCaughtUp, // upsert.go
}

// nativeStop cancels the run's streaming Flink job, as its operator would
// (the SQL client that submitted it then exits); the harness then checks
// that the table holds every event once.
func nativeStop(r trial) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := runners.CancelFlinkJobs(ctx, r.flink.rest, flinkJobName(r)); err != nil {
		logf("cancelling Flink job %s: %v", flinkJobName(r), err)
	}
}
