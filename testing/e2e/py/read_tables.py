"""Read HAADE's tables with Spark SQL and/or pyiceberg, independently of HAADE's code, and print
what each engine saw as one JSON document.

    python.sh python read_tables.py --jars JARS --engines spark,pyiceberg \
        --table e2e.t --table e2e.t_dlq [--keys keys.json] [--snapshots] [--union A,B] \
        [--sql statements.json] --out result.json

For each engine and table: count(*), count(DISTINCT kafka_partition, kafka_offset), per
(kafka_topic, kafka_partition) the row count, distinct offsets, min and max offset; the rows whose
(kafka_partition, kafka_offset) are listed in --keys ({"ident": [[p, o], ...]}), every column
as JSON (timestamps as microseconds since the epoch, binary as base64); with --snapshots the
snapshot history with summaries. --union A,B adds count(DISTINCT partition, offset) over both
tables. --sql runs a JSON list of Spark SQL statements first, and returns their rows.
"""

import argparse
import json
import sys
import time

from haade_readers import b64, pyiceberg_catalog, spark_session


def jsonable(v):
    """v with every binary value, at any depth (kafka_headers is a list of structs), as base64."""
    if isinstance(v, (bytes, bytearray, memoryview)):
        return b64(v)
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    return v


def spark_read(args, keys):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    t0 = time.time()
    last = [t0]

    def lap(what):
        now = time.time()
        print(f"spark: {what} {now - last[0]:.1f}s", file=sys.stderr, flush=True)
        last[0] = now

    spark = spark_session(args.jars)
    lap("session")
    out = {"sql": [], "tables": {}}
    for stmt in args.sql:
        rows = spark.sql(stmt).collect()
        out["sql"].append({"statement": stmt, "rows": [[str(v) if v is not None else None for v in r] for r in rows]})
        lap(stmt[:60])
    for ident in args.table:
        # Read each table once: every query below runs on the cached rows.
        df = spark.table("local." + ident).cache()
        name = "t_" + ident.replace(".", "_")
        df.createOrReplaceTempView(name)
        res = {}
        c = spark.sql(f"SELECT count(*) AS n, count(DISTINCT kafka_partition, kafka_offset) AS d FROM {name}").collect()[0]
        res["count"], res["distinct_keys"] = c["n"], c["d"]
        lap(f"counts of {ident}")
        res["partitions"] = [
            {"topic": r[0], "partition": r[1], "count": r[2], "distinct": r[3], "min": r[4], "max": r[5]}
            for r in spark.sql(
                f"SELECT kafka_topic, kafka_partition, count(*), count(DISTINCT kafka_offset), "
                f"min(kafka_offset), max(kafka_offset) FROM {name} GROUP BY kafka_topic, kafka_partition"
            ).collect()
        ]
        lap(f"partitions of {ident}")
        want = keys.get(ident) or []
        if want:
            kdf = spark.createDataFrame([(int(p), int(o)) for p, o in want], "kp INT, ko BIGINT")
            sel = df.join(F.broadcast(kdf), (df.kafka_partition == kdf.kp) & (df.kafka_offset == kdf.ko)).select(*df.columns)
            cols = []
            for f in df.schema.fields:
                if isinstance(f.dataType, (T.TimestampType, T.TimestampNTZType)):
                    cols.append(F.unix_micros(F.col(f.name)).alias(f.name))
                else:
                    # binary comes back as bytearray, also inside kafka_headers'
                    # structs; Spark's base64() would wrap lines
                    cols.append(F.col(f.name))
            res["rows"] = [jsonable(r.asDict(recursive=True)) for r in sel.select(*cols).collect()]
        lap(f"rows of {ident}")
        if args.snapshots:
            res["snapshots"] = [
                {"committed_at": r[0], "snapshot_id": r[1], "parent_id": r[2], "operation": r[3], "summary": dict(r[4] or {})}
                for r in spark.sql(
                    f"SELECT unix_micros(committed_at), snapshot_id, parent_id, operation, summary "
                    f"FROM local.{ident}.snapshots ORDER BY committed_at"
                ).collect()
            ]
        out["tables"][ident] = res
        lap(f"snapshots of {ident}")
    if args.union:
        a, b = args.union.split(",")
        out["union_distinct"] = spark.sql(
            f"SELECT count(DISTINCT kafka_partition, kafka_offset) FROM "
            f"(SELECT kafka_partition, kafka_offset FROM t_{a.replace('.', '_')} "
            f"UNION ALL SELECT kafka_partition, kafka_offset FROM t_{b.replace('.', '_')})"
        ).collect()[0][0]
    spark.stop()
    out["seconds"] = round(time.time() - t0, 1)
    return out


def pyiceberg_read(args, keys):
    import pyarrow as pa
    import pyarrow.compute as pc

    t0 = time.time()
    cat = pyiceberg_catalog()
    out = {"tables": {}}
    arrows = {}

    def keycol(at):
        return pc.add(pc.multiply(pc.cast(at["kafka_partition"], pa.int64()), 1 << 40), pc.cast(at["kafka_offset"], pa.int64()))

    for ident in args.table:
        tbl = cat.load_table(ident)
        at = tbl.scan().to_arrow()
        arrows[ident] = at
        res = {"count": at.num_rows}
        res["distinct_keys"] = at.group_by(["kafka_partition", "kafka_offset"]).aggregate([]).num_rows
        g = at.group_by(["kafka_topic", "kafka_partition"]).aggregate(
            [("kafka_offset", "count"), ("kafka_offset", "count_distinct"), ("kafka_offset", "min"), ("kafka_offset", "max")]
        )
        res["partitions"] = [
            {"topic": r["kafka_topic"], "partition": r["kafka_partition"], "count": r["kafka_offset_count"],
             "distinct": r["kafka_offset_count_distinct"], "min": r["kafka_offset_min"], "max": r["kafka_offset_max"]}
            for r in g.to_pylist()
        ]
        want = keys.get(ident) or []
        if want:
            ks = pa.array([(int(p) << 40) + int(o) for p, o in want], pa.int64())
            sel = at.filter(pc.is_in(keycol(at), value_set=ks))
            cols = {}
            for f in sel.schema:
                col = sel[f.name]
                if pa.types.is_timestamp(f.type):
                    v = pc.cast(col, pa.int64()).to_pylist()
                    if f.type.unit == "ns":
                        v = [x // 1000 if x is not None else None for x in v]
                    cols[f.name] = v
                elif pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
                    # pyiceberg's scan reads a null list as [] (checked: pyarrow
                    # reads the same Parquet file's value as null, and so does
                    # Spark); HAADE never writes an empty list (no headers is
                    # null), so [] here is a null.
                    cols[f.name] = [None if x == [] else jsonable(x) for x in col.to_pylist()]
                else:
                    # binary as base64
                    cols[f.name] = [jsonable(x) for x in col.to_pylist()]
            res["rows"] = [dict(zip(cols.keys(), vals)) for vals in zip(*cols.values())] if cols else []
        if args.snapshots:
            res["snapshots"] = [
                {"committed_at": s.timestamp_ms * 1000, "snapshot_id": s.snapshot_id, "parent_id": s.parent_snapshot_id,
                 "operation": s.summary.operation.value if s.summary else None,
                 "summary": dict(s.summary.additional_properties) if s.summary else {}}
                for s in sorted(tbl.metadata.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number))
            ]
        out["tables"][ident] = res
    if args.union:
        a, b = args.union.split(",")
        both = pa.concat_arrays([keycol(arrows[a]).combine_chunks(), keycol(arrows[b]).combine_chunks()])
        out["union_distinct"] = len(pc.unique(both))
    out["seconds"] = round(time.time() - t0, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", default="")
    ap.add_argument("--engines", default="spark,pyiceberg")
    ap.add_argument("--table", action="append", default=[])
    ap.add_argument("--keys", default=None)
    ap.add_argument("--snapshots", action="store_true")
    ap.add_argument("--union", default=None)
    ap.add_argument("--sql", default=None, help="JSON file: a list of Spark SQL statements to run first")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    keys = {}
    if args.keys:
        with open(args.keys) as f:
            keys = json.load(f)
    if args.sql:
        with open(args.sql) as f:
            args.sql = json.load(f)
    else:
        args.sql = []
    result = {}
    for e in args.engines.split(","):
        if e == "spark":
            result["spark"] = spark_read(args, keys)
        elif e == "pyiceberg":
            result["pyiceberg"] = pyiceberg_read(args, keys)
        else:
            print(f"unknown engine {e}", file=sys.stderr)
            return 2
        print(f"{e}: read {', '.join(args.table)} in {result[e]['seconds']}s", file=sys.stderr, flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
