"""The Spark side of the side-by-side benchmark: the bronze job as the Spark stack writes it.

Spark 3.5 Structured Streaming reads the Kafka topic, parses the JSON value with from_json,
adds ingested_at, and appends to an Iceberg table through Iceberg's streaming sink, one
micro-batch per trigger. The table has bronze's columns and partitioning, in the same JdbcCatalog
(PostgreSQL) and on the same MinIO as HAADE's. Iceberg's sink is exactly-once: it records the
query id and epoch in each snapshot and skips an epoch it has committed, and the Kafka offsets
live in the checkpoint.

Run by the Go harness (go run ./testing/sidebyside) through testing/services/python.sh python:

  spark_bronze.py --brokers 127.0.0.1:9092 --topic T --table sidebyside.spark_x \
      --trigger-ms 2000 --checkpoint /tmp/cp --jars a.jar,b.jar

It runs until SIGTERM or SIGINT, then stops the query and exits 0.
"""

import argparse
import os
import signal
import sys
import threading

# The e2e tier's Spark session and catalog settings (testing/e2e/py/haade_readers.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "py"))
from haade_readers import spark_session  # noqa: E402


def session(jars: str, cores: int, memory: str):
    # A long-running job, unlike the e2e readers: the full JIT and the default collector.
    return spark_session(
        jars,
        app="haade-sidebyside-spark",
        cores=cores,
        conf={
            "spark.driver.memory": memory,
            "spark.driver.extraJavaOptions": None,
            "spark.sql.adaptive.enabled": None,
            # from_json's fields are nullable; the filter below keeps only rows with a timestamp,
            # and the Kafka columns are never null, so the table's required columns can take them.
            "spark.sql.iceberg.check-nullability": "false",
        },
    )


# Bronze's columns (transforms/parse.Row) and its partitioning and file format (docs/DESIGN.md).
DDL = """
CREATE TABLE IF NOT EXISTS local.{table} (
  source string,
  title string,
  `timestamp` timestamp NOT NULL,
  ingested_at timestamp NOT NULL,
  kafka_topic string NOT NULL,
  kafka_partition int NOT NULL,
  kafka_offset bigint NOT NULL,
  kafka_timestamp timestamp,
  extra string
) USING iceberg
PARTITIONED BY (days(ingested_at))
TBLPROPERTIES (
  'format-version' = '2',
  'write.format.default' = 'parquet',
  'write.parquet.compression-codec' = 'zstd'
)
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--table", required=True, help="namespace.name in the catalog `local`")
    ap.add_argument("--trigger-ms", type=int, required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--jars", required=True)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--memory", default="2g")
    a = ap.parse_args()

    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    spark = session(a.jars, a.cores, a.memory)
    ns = a.table.split(".")[0]
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS local.{ns}")
    spark.sql(DDL.format(table=a.table))

    value = StructType(
        [
            StructField("source", StringType()),
            StructField("title", StringType()),
            StructField("timestamp", TimestampType()),
        ]
    )
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", a.brokers)
        .option("subscribe", a.topic)
        .option("startingOffsets", "earliest")
        .option("failOnDataLoss", "true")
        .load()
    )
    parsed = raw.select(
        F.from_json(F.col("value").cast("string"), value, {"mode": "PERMISSIVE"}).alias("v"),
        F.col("topic").alias("kafka_topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        F.col("timestamp").alias("kafka_timestamp"),
    )
    rows = parsed.select(
        F.col("v.source").alias("source"),
        F.col("v.title").alias("title"),
        F.col("v.timestamp").alias("timestamp"),
        F.current_timestamp().alias("ingested_at"),
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_timestamp",
        F.lit(None).cast("string").alias("extra"),
    ).where(F.col("timestamp").isNotNull())  # bronze sends these to its dead-letter table
    query = (
        rows.writeStream.format("iceberg")
        .outputMode("append")
        .trigger(processingTime=f"{a.trigger_ms} milliseconds")
        .option("checkpointLocation", a.checkpoint)
        .option("fanout-enabled", "true")
        .toTable(f"local.{a.table}")
    )
    print(f"spark: streaming {a.topic} into local.{a.table}, trigger {a.trigger_ms} ms", flush=True)

    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.is_set() and query.isActive:
        stop.wait(0.5)
    if query.exception() is not None:
        print(f"spark: query failed: {query.exception()}", file=sys.stderr, flush=True)
        return 1
    query.stop()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
