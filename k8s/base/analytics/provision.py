"""The HAADE dashboard as code: create or update, through Superset's REST API, the Trino
database, one virtual dataset per chart, the charts and the dashboard "HAADE lakehouse".

    provision.py --url http://127.0.0.1:8088 --user admin --password admin \
        [--trino trino://haade@127.0.0.1:8080] [--catalog iceberg] [--schema lakehouse] [--out ids.json]

Idempotent: every object is found by name and updated in place, so a rerun changes nothing
but what this file changed. Each chart gets the form data the dashboard draws from and a query
context, so /api/v1/chart/data returns the same figures (the tests compare them with Trino).
It prints the dashboard's URL; --out writes the ids as JSON.
"""

import argparse
import json
import sys
import time
import urllib.parse

import requests

DASHBOARD = "HAADE lakehouse"
SLUG = "haade-lakehouse"


def datasets(cat: str, schema: str) -> dict:
    """The virtual datasets: name -> SQL. Times are cast to zone-less timestamps in UTC (the
    connection's time zone), which Superset's time filters and axes handle without surprises."""
    t = lambda name: f"{cat}.{schema}.{name}"  # noqa: E731
    return {
        "haade_bronze_hourly": f"""SELECT CAST(date_trunc('hour', ingested_at) AS timestamp(6)) AS hour,
       count(*) AS row_count
FROM {t('bronze_events')}
GROUP BY 1""",
        "haade_dead_letters_hourly": f"""SELECT CAST(date_trunc('hour', ingested_at) AS timestamp(6)) AS hour,
       CASE WHEN payload IS NULL THEN 'tombstone'
            ELSE coalesce(nullif(trim(split_part(error, ':', 1)), ''), 'unknown') END AS reason,
       count(*) AS dead_letters
FROM {t('bronze_events_dlq')}
GROUP BY 1, 2""",
        "haade_source_daily": f"""SELECT CAST(day AS timestamp(6)) AS day, source, events
FROM {t('gold_source_daily')}""",
        "haade_trending_terms": f"""SELECT term, sum(mentions) AS mentions, count(DISTINCT hour) AS hours
FROM {t('gold_trending_terms')}
GROUP BY term""",
        "haade_silver_rejects": f"""SELECT reason, count(*) AS rejects
FROM {t('silver_rejects')}
GROUP BY reason""",
    }


def metric(expr: str, label: str) -> dict:
    return {"expressionType": "SQL", "sqlExpression": expr, "label": label}


def charts() -> list:
    """(name, dataset, viz_type, form data, query) for each chart, in dashboard order."""
    rows = metric("SUM(row_count)", "rows")
    dead = metric("SUM(dead_letters)", "dead letters")
    events = metric("SUM(events)", "events")
    mentions = metric("SUM(mentions)", "mentions")
    rejects = metric("SUM(rejects)", "rejects")
    bar = {"time_range": "No filter", "adhoc_filters": [], "row_limit": 10000, "show_legend": True,
           "rich_tooltip": True, "x_axis_title_margin": 15, "y_axis_title_margin": 30}
    return [
        ("Bronze rows per hour", "haade_bronze_hourly", "echarts_timeseries_bar",
         {**bar, "x_axis": "hour", "time_grain_sqla": "PT1H", "metrics": [rows], "groupby": []},
         {"columns": ["hour"], "metrics": [rows], "orderby": [["hour", True]]}),
        ("Dead letters per hour by reason", "haade_dead_letters_hourly", "echarts_timeseries_bar",
         {**bar, "x_axis": "hour", "time_grain_sqla": "PT1H", "metrics": [dead], "groupby": ["reason"], "stack": "Stack"},
         {"columns": ["hour", "reason"], "metrics": [dead], "orderby": [["hour", True]]}),
        ("Events per source per day (gold)", "haade_source_daily", "echarts_timeseries_bar",
         {**bar, "x_axis": "day", "time_grain_sqla": "P1D", "metrics": [events], "groupby": ["source"]},
         {"columns": ["day", "source"], "metrics": [events], "orderby": [["day", True]]}),
        ("Trending terms (gold)", "haade_trending_terms", "table",
         {"query_mode": "aggregate", "groupby": ["term"], "metrics": [mentions], "timeseries_limit_metric": mentions,
          "order_desc": True, "row_limit": 15, "adhoc_filters": [], "time_range": "No filter", "table_timestamp_format": "smart_date"},
         {"columns": ["term"], "metrics": [mentions], "orderby": [[mentions, False]], "row_limit": 15}),
        ("Silver rejects by reason", "haade_silver_rejects", "pie",
         {"groupby": ["reason"], "metric": rejects, "adhoc_filters": [], "row_limit": 100, "time_range": "No filter",
          "show_labels": True, "label_type": "key_value", "show_legend": True, "donut": True},
         {"columns": ["reason"], "metrics": [rejects], "orderby": [[rejects, False]]}),
    ]


class API:
    def __init__(self, url, user, password):
        self.url = url.rstrip("/")
        self.s = requests.Session()
        r = self.s.post(self.url + "/api/v1/security/login",
                        json={"username": user, "password": password, "provider": "db", "refresh": False}, timeout=60)
        r.raise_for_status()
        self.s.headers["Authorization"] = "Bearer " + r.json()["access_token"]
        r = self.s.get(self.url + "/api/v1/security/csrf_token/", timeout=60)
        r.raise_for_status()
        self.s.headers["X-CSRFToken"] = r.json()["result"]
        self.s.headers["Referer"] = self.url

    def call(self, method, path, **kw):
        r = self.s.request(method, self.url + path, timeout=120, **kw)
        if r.status_code >= 400:
            raise SystemExit(f"provision: {method} {path}: HTTP {r.status_code}: {r.text[:2000]}")
        return r.json() if r.content else {}

    def find(self, kind, col, value):
        q = urllib.parse.quote(f"(filters:!((col:{col},opr:eq,value:'{value}')),page_size:100)")
        res = self.call("GET", f"/api/v1/{kind}/?q={q}")["result"]
        return res[0]["id"] if res else None

    def upsert(self, kind, col, value, body):
        oid = self.find(kind, col, value)
        if oid is None:
            return self.call("POST", f"/api/v1/{kind}/", json=body)["id"], "created"
        self.call("PUT", f"/api/v1/{kind}/{oid}", json=body)
        return oid, "updated"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8088")
    ap.add_argument("--user", default="admin")
    ap.add_argument("--password", default="admin")
    ap.add_argument("--trino", default="trino://haade@127.0.0.1:8080", help="SQLAlchemy URI of Trino, without the catalog")
    ap.add_argument("--catalog", default="iceberg", help="Trino catalog: iceberg (PostgreSQL), rest or demo")
    ap.add_argument("--schema", default="lakehouse")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if a.catalog not in ("iceberg", "rest", "demo") and not a.catalog.isidentifier():
        raise SystemExit(f"provision: --catalog={a.catalog}: want a Trino catalog name")
    if not a.schema.replace("_", "").isalnum():
        raise SystemExit(f"provision: --schema={a.schema}: want a plain namespace name")

    api = API(a.url, a.user, a.password)
    db_name = f"HAADE Trino ({a.catalog})"
    db_id, how = api.upsert("database", "database_name", db_name, {
        "database_name": db_name,
        "sqlalchemy_uri": f"{a.trino}/{a.catalog}",
        "expose_in_sqllab": True,
        # Every time is read and filtered in UTC, whatever the server's zone.
        "extra": json.dumps({"engine_params": {"connect_args": {"timezone": "UTC", "http_scheme": "http"}},
                             "allows_virtual_table_explore": True}),
    })
    print(f"database {db_name}: {how} (id {db_id})", file=sys.stderr)

    ds_ids = {}
    for name, sql in datasets(a.catalog, a.schema).items():
        oid = api.find("dataset", "table_name", name)
        body = {"database": db_id, "schema": a.schema, "table_name": name, "sql": sql}
        if oid is None:
            oid = api.call("POST", "/api/v1/dataset/", json=body)["id"]
            how = "created"
        else:
            api.call("PUT", f"/api/v1/dataset/{oid}?override_columns=true",
                     json={"database_id": db_id, "schema": a.schema, "table_name": name, "sql": sql})
            how = "updated"
        # Columns and their types come from Trino: run the SQL once.
        api.call("PUT", f"/api/v1/dataset/{oid}/refresh")
        ds_ids[name] = oid
        print(f"dataset {name}: {how} (id {oid})", file=sys.stderr)

    dash_id, how = api.upsert("dashboard", "slug", SLUG, {"dashboard_title": DASHBOARD, "slug": SLUG, "published": True})
    chart_ids = []
    for name, ds, viz, fd, q in charts():
        dsid = ds_ids[ds]
        fd = {**fd, "viz_type": viz, "datasource": f"{dsid}__table"}
        query = {"filters": [], "extras": {"having": "", "where": ""}, "row_limit": fd.get("row_limit", 10000), **q}
        qc = {"datasource": {"id": dsid, "type": "table"}, "force": True, "queries": [query], "form_data": fd,
              "result_format": "json", "result_type": "full"}
        cid, chow = api.upsert("chart", "slice_name", name, {
            "slice_name": name, "viz_type": viz, "datasource_id": dsid, "datasource_type": "table",
            "params": json.dumps(fd), "query_context": json.dumps(qc), "dashboards": [dash_id]})
        chart_ids.append((cid, name))
        print(f"chart {name}: {chow} (id {cid})", file=sys.stderr)

    # The layout: two rows of charts, then the third.
    pos = {"DASHBOARD_VERSION_KEY": "v2", "ROOT_ID": {"type": "ROOT", "id": "ROOT_ID", "children": ["GRID_ID"]},
           "GRID_ID": {"type": "GRID", "id": "GRID_ID", "children": [], "parents": ["ROOT_ID"]},
           "HEADER_ID": {"type": "HEADER", "id": "HEADER_ID", "meta": {"text": DASHBOARD}}}
    rows = [chart_ids[0:2], chart_ids[2:4], chart_ids[4:]]
    for i, row in enumerate(rows):
        rid = f"ROW-{i}"
        pos["GRID_ID"]["children"].append(rid)
        pos[rid] = {"type": "ROW", "id": rid, "children": [], "parents": ["ROOT_ID", "GRID_ID"],
                    "meta": {"background": "BACKGROUND_TRANSPARENT"}}
        for cid, name in row:
            key = f"CHART-{cid}"
            pos[rid]["children"].append(key)
            pos[key] = {"type": "CHART", "id": key, "children": [], "parents": ["ROOT_ID", "GRID_ID", rid],
                        "meta": {"chartId": cid, "sliceName": name, "width": 6, "height": 50}}
    meta = {"timed_refresh_immune_slices": [], "expanded_slices": {}, "refresh_frequency": 0,
            "color_scheme": "supersetColors", "native_filter_configuration": [], "cross_filters_enabled": False}
    api.call("PUT", f"/api/v1/dashboard/{dash_id}", json={
        "dashboard_title": DASHBOARD, "slug": SLUG, "published": True,
        "position_json": json.dumps(pos), "json_metadata": json.dumps(meta)})
    print(f"dashboard {DASHBOARD}: {how} (id {dash_id})", file=sys.stderr)
    ids = {"database": db_id, "dashboard": dash_id, "slug": SLUG, "datasets": ds_ids,
           "charts": {name: cid for cid, name in chart_ids}, "url": f"{a.url}/superset/dashboard/{SLUG}/"}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(ids, f, indent=2)
    print(ids["url"])


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"provisioned in {time.time() - t0:.1f}s", file=sys.stderr)
