"""Check OpenLineage run events (one JSON event per line) against the OpenLineage client's model.

    openlineage.sh validate events.ndjson [more.ndjson ...]

PyPI's openlineage-python is generated from the OpenLineage spec (its classes carry the spec's
schema URLs) but ships no copy of the spec's JSON schema files, and neither do the other
OpenLineage packages on PyPI or Maven Central. So each event is built into the client's model,
strictly:

- every object becomes its generated class (RunEvent, Run, Job, InputDataset, OutputDataset,
  and each standard facet, chosen by its _schemaURL): a member the class does not have fails;
- every member's value must have the type the class declares (str, int, list, ...), and the
  class's validators run (runId a UUID, eventTime an ISO 8601 time with a time part);
- the event's schemaURL and each facet's _schemaURL must be the class's own, and each standard
  facet must sit under its standard name (schema, outputStatistics, errorMessage, ...);
- serialising the model again (openlineage's Serde) must give back the event, so nothing was
  dropped or renamed on the way;
- a custom facet (one whose _schemaURL is no standard facet's) needs a name with a prefix, a
  _producer and a _schemaURL, as the spec requires, and is checked with jsonschema against its
  schema file in this repository (runners/lineage/facets/);
- across the events, each run id has one START first and one COMPLETE, FAIL or ABORT last (or a
  RUNNING, for a job left running), all for the same job; FAIL carries an errorMessage facet.

Exit 0 when every event passes; 1 with one line per problem otherwise.
"""

import importlib
import json
import os
import pkgutil
import re
import sys

import attr
import jsonschema
import openlineage.client.generated as generated
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent
from openlineage.client.generated.base import EventType
from openlineage.client.serde import Serde

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUSTOM_SCHEMA_PREFIX = "https://github.com/haade/haade/blob/main/"

# The standard name of each standard facet this checker knows to expect.
STANDARD_NAMES = {
    "SchemaDatasetFacet": "schema",
    "CatalogDatasetFacet": "catalog",
    "OutputStatisticsOutputDatasetFacet": "outputStatistics",
    "InputStatisticsInputDatasetFacet": "inputStatistics",
    "ErrorMessageRunFacet": "errorMessage",
    "JobTypeJobFacet": "jobType",
    "ProcessingEngineRunFacet": "processing_engine",
    "SymlinksDatasetFacet": "symlinks",
}


def facet_classes():
    """Every generated facet class, by its schema URL."""
    out = {}
    for mod in pkgutil.iter_modules(generated.__path__):
        m = importlib.import_module(f"{generated.__name__}.{mod.name}")
        for v in vars(m).values():
            if isinstance(v, type) and attr.has(v) and hasattr(v, "_get_schema") and v.__name__.endswith("Facet"):
                out[v._get_schema()] = v
    return out


FACETS = facet_classes()


class Problem(Exception):
    pass


def check_type(where, value, annotation, module):
    """value must match an attrs annotation string such as 'int | None' or 'list[X] | None'."""
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", str(annotation))
    ok = False
    for alt in (a.strip() for a in annotation.split("|")):
        base = alt.split("[", 1)[0]
        if base == "None":
            ok = ok or value is None
        elif base == "str":
            ok = ok or isinstance(value, str)
        elif base == "int":
            ok = ok or (isinstance(value, int) and not isinstance(value, bool))
        elif base == "float":
            ok = ok or (isinstance(value, (int, float)) and not isinstance(value, bool))
        elif base == "bool":
            ok = ok or isinstance(value, bool)
        elif base == "list":
            ok = ok or isinstance(value, list)
        elif base == "dict":
            ok = ok or isinstance(value, dict)
        else:
            ok = ok or not isinstance(value, (str, int, float, bool, list)) or value is None
    if not ok:
        raise Problem(f"{where}: {value!r} is not {annotation}")


def build(cls, data, where):
    """data as an instance of the attrs class cls, strictly; nested attrs classes are built too."""
    if not isinstance(data, dict):
        raise Problem(f"{where}: want a JSON object, got {data!r}")
    fields = {f.name: f for f in attr.fields(cls)}
    kwargs = {}
    for key, value in data.items():
        name = key
        if name == "_schemaURL":
            continue  # init=False: set by the class itself, compared below
        if name not in fields:
            raise Problem(f"{where}: {cls.__name__} has no member {key!r}")
        f = fields[name]
        check_type(f"{where}.{key}", value, f.type, sys.modules[cls.__module__])
        nested = nested_class(f.type, sys.modules[cls.__module__])
        if nested is not None and isinstance(value, list):
            value = [build(nested, v, f"{where}.{key}[{i}]") for i, v in enumerate(value)]
        elif nested is not None and isinstance(value, dict):
            value = build(nested, value, f"{where}.{key}")
        kwargs[f.alias if hasattr(f, "alias") and f.alias else name.lstrip("_")] = value
    try:
        obj = cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise Problem(f"{where}: {cls.__name__}: {e}") from None
    if "_schemaURL" in data and data["_schemaURL"] != cls._get_schema():
        raise Problem(f"{where}: _schemaURL {data['_schemaURL']!r}, want {cls._get_schema()!r}")
    return obj


def nested_class(annotation, module):
    """The attrs class named in an annotation such as 'list[SchemaDatasetFacetFields] | None'."""
    if not isinstance(annotation, str):
        return None
    for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation):
        c = getattr(module, name, None)
        if isinstance(c, type) and attr.has(c):
            return c
    return None


def facets(kind, data, where):
    """The facets of one facets map as model objects; custom facets are checked and left out."""
    out = {}
    if data is None:
        return out
    if not isinstance(data, dict):
        raise Problem(f"{where}: want an object of facets")
    for name, f in data.items():
        w = f"{where}.{name}"
        if not isinstance(f, dict) or not isinstance(f.get("_producer"), str) or not isinstance(f.get("_schemaURL"), str):
            raise Problem(f"{w}: a facet needs _producer and _schemaURL")
        cls = FACETS.get(f["_schemaURL"])
        if cls is None:
            check_custom(name, f, w)
            continue
        if not issubclass(cls, kind):
            raise Problem(f"{w}: {cls.__name__} is not a {kind.__name__}")
        want = STANDARD_NAMES.get(cls.__name__)
        if want is not None and name != want:
            raise Problem(f"{w}: {cls.__name__} goes under {want!r}")
        out[name] = build(cls, f, w)
    return out


def check_custom(name, f, where):
    if not re.match(r"^[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+$", name):
        raise Problem(f"{where}: a custom facet's name needs a prefix, e.g. haade_{name}")
    url = f["_schemaURL"]
    if not url.startswith(CUSTOM_SCHEMA_PREFIX):
        raise Problem(f"{where}: unknown facet schema {url!r}")
    path, _, pointer = url[len(CUSTOM_SCHEMA_PREFIX):].partition("#")
    with open(os.path.join(REPO, path)) as fh:
        schema = json.load(fh)
    sub = schema
    for part in [p for p in pointer.split("/") if p]:
        sub = sub[part]
    validator = jsonschema.Draft202012Validator({**sub, "$defs": schema.get("$defs", {})},
                                                format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(f), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        raise Problem(f"{where}: {'/'.join(map(str, e.path))}: {e.message}")


def strip_custom(event):
    """The event without its custom facets (compared on their own)."""
    e = json.loads(json.dumps(event))

    def drop(fs):
        if isinstance(fs, dict):
            for k in [k for k, v in fs.items() if isinstance(v, dict) and v.get("_schemaURL") not in FACETS]:
                del fs[k]

    drop(e.get("run", {}).get("facets"))
    drop(e.get("job", {}).get("facets"))
    for d in e.get("inputs") or []:
        drop(d.get("facets"))
        drop(d.get("inputFacets"))
    for d in e.get("outputs") or []:
        drop(d.get("facets"))
        drop(d.get("outputFacets"))
    return e


def normal(v):
    """v without None, empty lists and empty objects, which mean nothing in an event."""
    if isinstance(v, dict):
        out = {k: normal(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, [], {})}
    if isinstance(v, list):
        return [normal(x) for x in v]
    return v


def dataset(cls, facet_key, facet_kind, d, where):
    allowed = {"namespace", "name", "facets", facet_key}
    if not isinstance(d, dict):
        raise Problem(f"{where}: want an object")
    extra = set(d) - allowed
    if extra:
        raise Problem(f"{where}: {cls.__name__} has no member {sorted(extra)[0]!r}")
    for k in ("namespace", "name"):
        if not isinstance(d.get(k), str) or not d[k]:
            raise Problem(f"{where}.{k}: want a non-empty string")
    from openlineage.client.generated.base import DatasetFacet
    kw = {facet_key: facets(facet_kind, d.get(facet_key), f"{where}.{facet_key}")}
    return cls(namespace=d["namespace"], name=d["name"], facets=facets(DatasetFacet, d.get("facets"), f"{where}.facets"), **kw)


def event(e, where):
    from openlineage.client.generated.base import InputDatasetFacet, JobFacet, OutputDatasetFacet, RunFacet
    allowed = {"eventType", "eventTime", "run", "job", "inputs", "outputs", "producer", "schemaURL"}
    extra = set(e) - allowed
    if extra:
        raise Problem(f"{where}: RunEvent has no member {sorted(extra)[0]!r}")
    for k in ("eventTime", "producer", "schemaURL"):
        if not isinstance(e.get(k), str):
            raise Problem(f"{where}.{k}: want a string")
    try:
        et = EventType(e.get("eventType"))
    except ValueError:
        raise Problem(f"{where}.eventType: {e.get('eventType')!r} is no event type") from None
    run, job = e.get("run"), e.get("job")
    if not isinstance(run, dict) or set(run) - {"runId", "facets"} or not isinstance(run.get("runId"), str):
        raise Problem(f"{where}.run: want {{runId, facets}}")
    if not isinstance(job, dict) or set(job) - {"namespace", "name", "facets"} or not job.get("namespace") or not job.get("name"):
        raise Problem(f"{where}.job: want {{namespace, name, facets}}")
    try:
        ev = RunEvent(
            eventType=et,
            eventTime=e["eventTime"],
            producer=e["producer"],
            run=Run(runId=run["runId"], facets=facets(RunFacet, run.get("facets"), f"{where}.run.facets")),
            job=Job(namespace=job["namespace"], name=job["name"], facets=facets(JobFacet, job.get("facets"), f"{where}.job.facets")),
            inputs=[dataset(InputDataset, "inputFacets", InputDatasetFacet, d, f"{where}.inputs[{i}]") for i, d in enumerate(e.get("inputs") or [])],
            outputs=[dataset(OutputDataset, "outputFacets", OutputDatasetFacet, d, f"{where}.outputs[{i}]") for i, d in enumerate(e.get("outputs") or [])],
        )
    except (TypeError, ValueError) as x:
        raise Problem(f"{where}: {x}") from None
    if e["schemaURL"] != ev.schemaURL:
        raise Problem(f"{where}.schemaURL: {e['schemaURL']!r}, want {ev.schemaURL!r}")
    back, want = normal(Serde.to_dict(ev)), normal(strip_custom(e))
    if back != want:
        raise Problem(f"{where}: the client's model does not give the event back:\n  model {json.dumps(back, sort_keys=True)}\n  event {json.dumps(want, sort_keys=True)}")
    if et == EventType.FAIL and "errorMessage" not in (run.get("facets") or {}):
        raise Problem(f"{where}: FAIL without an errorMessage facet")
    return ev


def main(paths):
    problems, runs, n = [], {}, 0
    for path in paths:
        with open(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{os.path.basename(path)}:{lineno}"
                n += 1
                try:
                    e = json.loads(line)
                    if not isinstance(e, dict):
                        raise Problem(f"{where}: not a JSON object")
                    event(e, where)
                    runs.setdefault(e["run"]["runId"], []).append((where, e["eventType"], (e["job"]["namespace"], e["job"]["name"])))
                except json.JSONDecodeError as x:
                    problems.append(f"{where}: not JSON: {x}")
                except Problem as x:
                    problems.append(str(x))
    for run_id, evs in runs.items():
        kinds = [k for _, k, _ in evs]
        if kinds[0] != "START" or kinds.count("START") != 1:
            problems.append(f"run {run_id}: want one START first, got {kinds}")
        ends = [k for k in kinds if k in ("COMPLETE", "FAIL", "ABORT")]
        if len(ends) > 1 or (ends and kinds[-1] not in ends) or (not ends and kinds[-1] != "RUNNING"):
            problems.append(f"run {run_id}: want one COMPLETE, FAIL or ABORT last (or RUNNING), got {kinds}")
        if len({j for _, _, j in evs}) != 1:
            problems.append(f"run {run_id}: events name different jobs")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{n} events of {len(runs)} runs valid (openlineage-python {version('openlineage-python')}, jsonschema {version('jsonschema')})")
    return 0


def version(dist):
    from importlib.metadata import version as v
    return v(dist)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip())
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
