"""Read HAADE's tables through an Iceberg REST catalog with pyiceberg's RestCatalog, independently
of HAADE's code, and print what it saw as one JSON document.

    python.sh python read_rest.py --uri http://127.0.0.1:8181 --table e2e.t --table e2e.t_dlq \
        [--union e2e.t,e2e.t_dlq] --out result.json

For each table: its location, count(*), count(DISTINCT kafka_partition, kafka_offset), per
kafka_partition the row count and min and max offset, and the snapshot history (id, parent,
operation, summary). --union A,B adds count(DISTINCT partition, offset) over both tables.
"""

import argparse
import json
import sys
import time

import pyarrow as pa

from haade_readers import pyiceberg_rest_catalog


def distinct_keys(t: pa.Table) -> int:
    return t.select(["kafka_partition", "kafka_offset"]).group_by(["kafka_partition", "kafka_offset"]).aggregate([]).num_rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--table", action="append", default=[])
    ap.add_argument("--union", default="")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    t0 = time.time()
    cat = pyiceberg_rest_catalog(args.uri)
    out = {"tables": {}}
    keys = {}
    for ident in args.table:
        tbl = cat.load_table(ident)
        rows = tbl.scan(selected_fields=("kafka_topic", "kafka_partition", "kafka_offset")).to_arrow()
        keys[ident] = rows.select(["kafka_partition", "kafka_offset"])
        res = {"location": tbl.location(), "count": rows.num_rows, "distinct_keys": distinct_keys(rows)}
        parts = rows.group_by("kafka_partition").aggregate(
            [("kafka_offset", "count"), ("kafka_offset", "min"), ("kafka_offset", "max")]
        )
        res["partitions"] = sorted(
            (
                {"partition": p, "count": c, "min": lo, "max": hi}
                for p, c, lo, hi in zip(
                    parts["kafka_partition"].to_pylist(),
                    parts["kafka_offset_count"].to_pylist(),
                    parts["kafka_offset_min"].to_pylist(),
                    parts["kafka_offset_max"].to_pylist(),
                )
            ),
            key=lambda r: r["partition"],
        )
        res["snapshots"] = [
            {
                "snapshot_id": s.snapshot_id,
                "parent_id": s.parent_snapshot_id,
                "operation": s.summary.operation.value if s.summary else None,
                "summary": dict(s.summary.additional_properties) if s.summary else {},
            }
            for s in tbl.snapshots()
        ]
        out["tables"][ident] = res
        print(f"pyiceberg rest: read {ident}: {rows.num_rows} rows, {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
    if args.union:
        a, b = args.union.split(",")
        out["union_distinct"] = distinct_keys(pa.concat_tables([keys[a], keys[b]]))
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
