package main

import "text/template"

// The native contender in upsert mode (--keys): the Flink SQL a Flink user
// writes to keep the latest event per Kafka key in an Iceberg table.
//
//   - The source is the upsert-kafka connector: the record's key (format
//     raw) is the key column, the value is JSON, and PRIMARY KEY ... NOT
//     ENFORCED names the key. A record is an upsert of its key, and a
//     tombstone (a null value) a DELETE of it. The connector always reads
//     from the earliest offset. Flink's planner puts a ChangelogNormalize
//     after it (state per key), which turns the upserts into a changelog
//     with the previous row.
//   - The sink is Iceberg's Flink sink on a format-v2 table whose
//     identifier field (the Flink primary key) is kafka_key, with
//     'write.upsert.enabled': for each row it writes an equality delete of
//     its key, then the row; for a DELETE, the equality delete alone. A key
//     written twice by one writer between two checkpoints gets a position
//     delete instead. Nothing is rewritten: readers merge the deletes.
//   - The table is unpartitioned: Iceberg requires the partition's source
//     columns among the equality fields in upsert mode, so bronze's
//     day(ingested_at) cannot be its partitioning (a key's update would
//     land in another day's partition, and the delete of the old row in
//     the new one). The script makes the table, as a Flink user would; the
//     key is a STRING here, where bronze's kafka_key is binary.
//
// The job is streaming (Iceberg 1.10.0's bounded FlinkSink loses files:
// native.go) and the harness cancels it once the table is right.
var nativeUpsertScript = template.Must(template.Must(nativePrelude.Clone()).New("native_upsert.sql").Parse(`-- The side-by-side harness's native contender in upsert mode: Iceberg's own Flink sink
-- (testing/sidebyside/native_upsert.go), run with testing/services/flinknative.sh sql-client -f.
{{template "prelude" .}}
CREATE DATABASE IF NOT EXISTS ` + "`local`.`{{.Namespace}}`" + `;

-- Unpartitioned: in upsert mode Iceberg wants every partition source column among the
-- equality fields (here kafka_key alone), which day(ingested_at) is not.
CREATE TABLE ` + "`local`.`{{.Namespace}}`.`{{.Table}}`" + ` (
  kafka_key STRING NOT NULL,
  ` + "`source`" + ` STRING,
  ` + "`title`" + ` STRING,
  ` + "`timestamp`" + ` TIMESTAMP_LTZ(6),
  ingested_at TIMESTAMP_LTZ(6),
  kafka_topic STRING,
  kafka_partition INT,
  kafka_offset BIGINT,
  kafka_timestamp TIMESTAMP_LTZ(3),
  PRIMARY KEY (kafka_key) NOT ENFORCED
) WITH (
  'format-version' = '2',
  'write.upsert.enabled' = 'true'
);

CREATE TEMPORARY TABLE kafka_upserts (
  kafka_key STRING NOT NULL,
  ` + "`source`" + ` STRING,
  ` + "`title`" + ` STRING,
  ` + "`timestamp`" + ` TIMESTAMP_LTZ(6),
  kafka_topic STRING METADATA FROM 'topic' VIRTUAL,
  kafka_partition INT METADATA FROM 'partition' VIRTUAL,
  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL,
  kafka_timestamp TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  PRIMARY KEY (kafka_key) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{.Topic}}',
  'properties.bootstrap.servers' = '{{.Brokers}}',
  'properties.group.id' = '{{.Job}}',
  'key.format' = 'raw',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY',
  'value.json.timestamp-format.standard' = 'ISO-8601',
  'value.json.fail-on-missing-field' = 'false',
  'value.json.ignore-parse-errors' = 'false'
);

INSERT INTO ` + "`local`.`{{.Namespace}}`.`{{.Table}}`" + `
SELECT kafka_key, ` + "`source`, `title`, `timestamp`" + `, CURRENT_TIMESTAMP, kafka_topic, kafka_partition, kafka_offset, kafka_timestamp
FROM kafka_upserts;
`))
