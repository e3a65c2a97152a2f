"""The Iceberg table the Kafka Connect sink writes to, seen through pyiceberg (catalog `local`,
SqlCatalog on the PostgreSQL catalog and MinIO that testing/services/ start). Independent of
both HAADE's Go code and the sink's Java code.

    table.py create NS.TABLE            create it (if missing) with bronze's schema and partitioning
    table.py count NS.TABLE             print the current snapshot's total-records (0 before the
                                        first commit, -1 when the table does not exist)
    table.py count NS.TABLE --until N [--timeout S] [--interval S]
                                        poll until total-records >= N; print one line per change
                                        ("<seconds since start> <rows> <snapshots>") and exit 0,
                                        or exit 1 at the timeout
    table.py drop NS.TABLE              drop it (and purge its files) if it exists

Run it with testing/services/python.sh python testing/services/connect/table.py ...
"""

import argparse
import os
import sys
import time

PG = os.environ.get("HAADE_E2E_PG", "127.0.0.1:5432")
S3 = os.environ.get("HAADE_E2E_S3", "http://127.0.0.1:9000")


def catalog():
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(
        "local",
        uri=f"postgresql+psycopg2://haade:haade@{PG}/lakehouse",
        warehouse="s3://warehouse/",
        **{
            "s3.endpoint": S3,
            "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", "minioadmin"),
            "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", "minioadmin"),
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    )


def bronze_schema():
    # The columns of lakehouse.bronze_events (transforms/parse/batch.go), same ids, types and
    # nullability, so both contenders write the same kind of row.
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType, TimestamptzType

    return Schema(
        NestedField(1, "source", StringType(), required=False),
        NestedField(2, "title", StringType(), required=False),
        NestedField(3, "timestamp", TimestamptzType(), required=True),
        NestedField(4, "ingested_at", TimestamptzType(), required=True),
        NestedField(5, "kafka_topic", StringType(), required=True),
        NestedField(6, "kafka_partition", IntegerType(), required=True),
        NestedField(7, "kafka_offset", LongType(), required=True),
        NestedField(8, "kafka_timestamp", TimestamptzType(), required=False),
        NestedField(9, "extra", StringType(), required=False),
    )


def create(cat, ident):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform

    ns = ident.rsplit(".", 1)[0]
    cat.create_namespace_if_not_exists(ns)
    if cat.table_exists(ident):
        print(f"{ident} exists")
        return
    spec = PartitionSpec(PartitionField(source_id=4, field_id=1000, transform=DayTransform(), name="ingested_at_day"))
    cat.create_table(ident, schema=bronze_schema(), partition_spec=spec,
                     properties={"write.parquet.compression-codec": "zstd", "format-version": "2"})
    print(f"{ident} created")


def rows(cat, ident):
    """(total-records, snapshot count), or (-1, 0) when the table does not exist."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        t = cat.load_table(ident)
    except NoSuchTableError:
        return -1, 0
    snap = t.current_snapshot()
    if snap is None:
        return 0, 0
    total = (snap.summary or {}).get("total-records") if snap.summary else None
    if total is None:  # no summary figure: count the live data files' records
        total = sum(task.file.record_count for task in t.scan().plan_files())
    return int(total), len(t.metadata.snapshots)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["create", "count", "drop"])
    ap.add_argument("table")
    ap.add_argument("--until", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--interval", type=float, default=0.5)
    a = ap.parse_args()
    cat = catalog()
    if a.cmd == "create":
        create(cat, a.table)
    elif a.cmd == "drop":
        if cat.table_exists(a.table):
            cat.purge_table(a.table)
            print(f"{a.table} dropped")
    elif a.until is None:
        print(rows(cat, a.table)[0])
    else:
        t0 = time.monotonic()
        last = None
        while True:
            n, snaps = rows(cat, a.table)
            if (n, snaps) != last:
                print(f"{time.monotonic() - t0:.1f} {n} {snaps}", flush=True)
                last = (n, snaps)
            if n >= a.until:
                return 0
            if time.monotonic() - t0 > a.timeout:
                print(f"timed out after {a.timeout:.0f}s at {n} rows", file=sys.stderr)
                return 1
            time.sleep(a.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
