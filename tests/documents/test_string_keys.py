"""No module of oltplab outside documents/ and rundir/ reads a run document by string key:
run.json is read through its types (oltplab.documents.run), intervals.csv's columns through
rundir.intervals.Column. The scan flags every `x["key"]` and `x.get("key")` whose key is a
property name of schema/run.schema.json (at any depth) or an intervals.csv column.

Other documents use some of the same names (an option is called `threads`, an engine event
carries `transactions`): they are told apart by the name they are held under, or by the
module that parses them, in the two short lists below. Anything else is a regression: read
the typed document instead (run.doc, run.summary, Column.tps)."""

import ast
import json
from pathlib import Path

from oltplab.rundir.intervals import COLUMNS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "oltplab"
SCHEMA = ROOT / "schema" / "run.schema.json"
# Where run documents are defined, written and read: their keys belong there.
OWNERS = ("documents", "rundir")

# Names that hold other documents than a run's, whose keys may be run.json's names too.
OTHER_DOCUMENTS = {
    # workload options: the engine's catalogue names them (threads, events, percentile, ...)
    "options": "workload options",
    "effective": "workload options with the defaults filled in",
    # the engine's own JSON (_core.pyi): a run's result, its progress events, a Ray actor's
    # drain of both, and its host facts
    "result": "the engine's result",
    "event": "an engine progress event",
    "started": "the engine's started event",
    "drained": "a Ray actor's drained events and result",
    "facts": "a Ray actor's host facts",
    # what the engine says of a sysbench script (engine.script_describe), and one option it
    # declares
    "described": "the engine's description of a script",
    "declaration": "an option a script declares",
    # urllib.parse.parse_qs of a --db URL (?host=/path, ?socket=/path)
    "query": "a URL's query parameters",
}
# Modules that parse another format, whose field names are run.json's too.
OTHER_FORMATS = {
    "lab/labfile.py": "the lab file's TOML tables ([lab], [client], [[workloads]] options)",
    "lab/ray_client.py": "the lab file's [client] table",
    "sysbench_import/parse.py": "sysbench's text output, field by field",
}


def run_keys() -> set[str]:
    """Every property name of run.json at any depth, and every intervals.csv column."""
    found: set[str] = set(COLUMNS)

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    found.update(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(SCHEMA.read_text()))
    return found


def _holder(node: ast.expr) -> str:
    """The name a subscripted value is held under: `self.facts["x"]` -> facts."""
    while isinstance(node, ast.Subscript | ast.Call):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def offences(source: str, module: str, keys: set[str]) -> list[str]:
    """`module:line: holder["key"]` for each read of a run document's key in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key, holder = _string(node.slice), node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            key, holder = _string(node.args[0]), node.func.value
        else:
            continue
        if key in keys and _holder(holder) not in OTHER_DOCUMENTS:
            found.append(f"{module}:{node.lineno}: {_holder(holder)}[{key!r}]")
    return found


def test_no_module_reads_a_run_document_by_string_key() -> None:
    keys = run_keys()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.split("/")[0] in OWNERS or module in OTHER_FORMATS:
            continue
        found += offences(path.read_text(encoding="utf-8"), module, keys)
    assert found == [], "read these through oltplab.documents' types:\n" + "\n".join(found)


def test_the_allowed_modules_exist() -> None:
    """An entry of OTHER_FORMATS whose module is gone must go too."""
    assert [m for m in OTHER_FORMATS if not (PACKAGE / m).is_file()] == []


OFFENDING = """
import json

def tps_of(run_dir):
    doc = json.loads((run_dir / "run.json").read_text())
    return doc["summary"]["tps"], doc.get("flags")

def p95(frame, manifest):
    return frame["lat_p95_ms"].max(), manifest["summary"].get("latency_ms")
"""

INNOCENT = """
def threads_of(options, effective, result, run):
    options["threads"] = 2  # a write, not a read
    return options["threads"], effective.get("events"), result["transactions"], run.summary.tps

def colour(palette):
    return palette["blue"], {"summary": 1}
"""


def test_the_scan_finds_reads_by_key_and_lets_other_documents_be() -> None:
    keys = run_keys()
    assert sorted(offences(OFFENDING, "m.py", keys)) == [
        "m.py:6: doc['flags']",
        "m.py:6: doc['summary']",
        "m.py:6: doc['tps']",
        "m.py:9: frame['lat_p95_ms']",
        "m.py:9: manifest['latency_ms']",
        "m.py:9: manifest['summary']",
    ]
    assert offences(INNOCENT, "m.py", keys) == []


def test_the_keys_come_from_the_schema_and_the_intervals() -> None:
    keys = run_keys()
    assert {"summary", "p99.9", "tpmC", "ray_address", "lat_p95_ms", "svc_p99_ms"} <= keys
    assert "blue" not in keys
