"""Spark 3.5's own table maintenance on HAADE's tables, as another team would run it:
rewrite_data_files, then expire_snapshots down to the current snapshot.

    python.sh python spark_maintain.py --jars JARS analytics.bronze_events ...

The catalog settings are the e2e tier's (testing/e2e/py/haade_readers.py): Iceberg's JdbcCatalog
`local` on the tier's PostgreSQL, S3FileIO on MinIO. Prints one JSON line per table.
"""

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e", "py"))
from haade_readers import spark_session  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jars", required=True)
    ap.add_argument("tables", nargs="+")
    a = ap.parse_args()
    spark = spark_session(a.jars, app="haade-foreign-maintenance")
    for t in a.tables:
        rw = spark.sql(
            f"CALL local.system.rewrite_data_files(table => '{t}', options => map('min-input-files', '1', 'rewrite-all', 'true'))"
        ).collect()[0]
        # Everything but the current snapshot: as short a retention as Spark allows (no guard).
        now = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)).strftime("%Y-%m-%d %H:%M:%S")
        ex = spark.sql(
            f"CALL local.system.expire_snapshots(table => '{t}', older_than => TIMESTAMP '{now}', retain_last => 1)"
        ).collect()[0]
        left = spark.sql(f"SELECT count(*) FROM local.{t}.snapshots").collect()[0][0]
        print(json.dumps({"table": t, "rewritten_files": rw[0], "added_files": rw[1],
                          "deleted_data_files": ex[0], "snapshots_left": left}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
