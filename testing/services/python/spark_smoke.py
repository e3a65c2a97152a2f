"""Smoke test of the Python side of the e2e tier: Spark 3.5 with Iceberg's JdbcCatalog `local`
on a SQLite file writes a row to lakehouse.smoke*, reads it back, and pyiceberg's SqlCatalog
reads the same table; then Spark drops it with PURGE (unless --keep).
Optionally the catalog is in PostgreSQL (--postgres), the warehouse on MinIO (S3FileIO,
--s3-endpoint), and a batch read of a Kafka topic checks the Kafka connector (--kafka).

Run it through python.sh:  testing/services/python.sh smoke [--postgres HOST:PORT] [--s3-endpoint URL] [--kafka HOST:PORT]
"""

import argparse
import os
import shutil
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", required=True, help="comma-separated spark.jars")
    ap.add_argument("--workdir", default=None, help="where the catalog and warehouse go (default: a temp dir)")
    ap.add_argument("--s3-endpoint", default=None, help="put the warehouse on s3://warehouse/ at this endpoint")
    ap.add_argument("--postgres", default=None, metavar="HOST:PORT",
                    help="keep the catalog in PostgreSQL (role haade, database lakehouse) instead of SQLite")
    ap.add_argument("--kafka", default=None, help="bootstrap servers: also read --topic in batch")
    ap.add_argument("--topic", default="fintech.debt.raw")
    ap.add_argument("--keep", action="store_true", help="keep the table instead of dropping it with PURGE")
    args = ap.parse_args()

    t0 = time.time()
    work = args.workdir or tempfile.mkdtemp(prefix="haade-spark-smoke-")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "catalog.db")
    table = "smoke_s3" if args.s3_endpoint else "smoke"
    if args.postgres:
        table += "_pg"
        jdbc_uri = f"jdbc:postgresql://{args.postgres}/lakehouse"
        py_uri = f"postgresql+psycopg2://haade:haade@{args.postgres}/lakehouse"
        where = jdbc_uri
    else:
        jdbc_uri = "jdbc:sqlite:" + db
        py_uri = "sqlite:///" + db
        where = db
    if args.s3_endpoint:
        warehouse = "s3://warehouse/spark-smoke"
    else:
        warehouse = "file://" + os.path.join(work, "warehouse")

    from pyspark.sql import SparkSession

    b = (
        SparkSession.builder.master("local[1]")
        .appName("haade-spark-smoke")
        .config("spark.jars", args.jars)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.local.type", "jdbc")
        .config("spark.sql.catalog.local.uri", jdbc_uri)
        # the layout iceberg-go's SQL catalog writes (with iceberg_type)
        .config("spark.sql.catalog.local.jdbc.schema-version", "V1")
        .config("spark.sql.catalog.local.warehouse", warehouse)
    )
    if args.postgres:
        b = b.config("spark.sql.catalog.local.jdbc.user", "haade").config("spark.sql.catalog.local.jdbc.password", "haade")
    if args.s3_endpoint:
        b = (
            b.config("spark.sql.catalog.local.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
            .config("spark.sql.catalog.local.s3.endpoint", args.s3_endpoint)
            .config("spark.sql.catalog.local.s3.path-style-access", "true")
            .config("spark.sql.catalog.local.client.region", os.environ.get("AWS_REGION", "us-east-1"))
        )
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(f"spark {spark.version} up in {time.time() - t0:.1f}s", flush=True)

    spark.sql("CREATE NAMESPACE IF NOT EXISTS local.lakehouse")
    spark.sql(f"DROP TABLE IF EXISTS local.lakehouse.{table} PURGE")
    spark.sql(
        f"CREATE TABLE local.lakehouse.{table} (id BIGINT, msg STRING, ts TIMESTAMP) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(f"INSERT INTO local.lakehouse.{table} VALUES (1, 'hello from spark', TIMESTAMP '2026-01-02 03:04:05')")
    rows = [tuple(r) for r in spark.sql(f"SELECT id, msg FROM local.lakehouse.{table}").collect()]
    if rows != [(1, "hello from spark")]:
        print(f"FAIL: spark read back {rows}", file=sys.stderr)
        return 1
    print(f"spark wrote and read local.lakehouse.{table}: {rows}", flush=True)

    if args.kafka:
        n = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", args.kafka)
            .option("subscribe", args.topic)
            .load()
            .count()
        )
        print(f"spark read {n} records from kafka topic {args.topic}", flush=True)

    from pyiceberg.catalog.sql import SqlCatalog

    props = {"uri": py_uri, "warehouse": warehouse}
    if args.s3_endpoint:
        props.update(
            {
                "s3.endpoint": args.s3_endpoint,
                "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", ""),
                "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
                "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
            }
        )
    cat = SqlCatalog("local", **props)
    got = cat.load_table(f"lakehouse.{table}").scan().to_arrow().to_pylist()
    if [(r["id"], r["msg"]) for r in got] != [(1, "hello from spark")]:
        print(f"FAIL: pyiceberg read {got}", file=sys.stderr)
        return 1
    print(f"pyiceberg read lakehouse.{table}: {got}", flush=True)
    if not args.keep:
        spark.sql(f"DROP TABLE local.lakehouse.{table} PURGE")
    spark.stop()
    print(f"OK in {time.time() - t0:.1f}s (catalog {where}, warehouse {warehouse})")
    if not args.workdir and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
