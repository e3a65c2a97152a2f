"""Read an evolved bronze table with Spark SQL and pyiceberg, independently of HAADE's code:
every row's kafka_partition, kafka_offset, extra and the given columns, and the table's schema.

    python.sh python read_evolved.py --jars JARS --table e2e.t --columns area,amount --out result.json

Output: {"spark": {"schema": [[name, type], ...], "rows": [[p, o, extra, col1, ...], ...]},
         "pyiceberg": {...}}, rows sorted by (p, o).
"""

import argparse
import json

from haade_readers import pyiceberg_catalog, spark_session


def spark_read(args):
    spark = spark_session(args.jars)
    df = spark.table("local." + args.table)
    schema = [[f.name, f.dataType.simpleString()] for f in df.schema.fields]
    cols = ["kafka_partition", "kafka_offset", "extra"] + args.columns
    rows = [list(r) for r in df.select(*cols).orderBy("kafka_partition", "kafka_offset").collect()]
    spark.stop()
    return {"schema": schema, "rows": rows}


def pyiceberg_read(args):
    tbl = pyiceberg_catalog().load_table(args.table)
    schema = [[f.name, str(f.field_type)] for f in tbl.schema().fields]
    cols = ["kafka_partition", "kafka_offset", "extra"] + args.columns
    at = tbl.scan(selected_fields=tuple(cols)).to_arrow()
    data = {c: at.column(c).to_pylist() for c in cols}
    rows = [[data[c][i] for c in cols] for i in range(at.num_rows)]
    rows.sort(key=lambda r: (r[0], r[1]))
    return {"schema": schema, "rows": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--columns", default="")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    args.columns = [c for c in args.columns.split(",") if c]
    out = {"spark": spark_read(args), "pyiceberg": pyiceberg_read(args)}
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
