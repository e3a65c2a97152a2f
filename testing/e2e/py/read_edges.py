"""Read a bronze table and its dead letters with pyiceberg, converting every row to Python
objects (to_pylist: timestamps become datetime), as a user's notebook would; print one JSON
document: {"rows": [{"offset", "timestamp", "kafka_timestamp"}], "dead": [{"offset", "error"}]}
with timestamps in ISO form. A timestamp that Python cannot represent fails the read.

    python.sh python read_edges.py TABLE DLQ_TABLE
"""

import json
import sys

from haade_readers import pyiceberg_catalog


def iso(v):
    return None if v is None else v.isoformat()


def main():
    table, dlq = sys.argv[1], sys.argv[2]
    cat = pyiceberg_catalog()
    rows = cat.load_table(table).scan().to_arrow().to_pylist()
    dead = cat.load_table(dlq).scan().to_arrow().to_pylist()
    print(json.dumps({
        "rows": sorted(({"offset": r["kafka_offset"], "timestamp": iso(r["timestamp"]),
                         "kafka_timestamp": iso(r["kafka_timestamp"])} for r in rows), key=lambda r: r["offset"]),
        "dead": sorted(({"offset": r["kafka_offset"], "error": r["error"],
                         "kafka_timestamp": iso(r["kafka_timestamp"])} for r in dead), key=lambda r: r["offset"]),
    }))


if __name__ == "__main__":
    main()
