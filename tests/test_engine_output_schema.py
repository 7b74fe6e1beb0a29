"""What the engine emits, against schema/run.schema.json: a Rust-side drift (a field renamed,
added or dropped in result/, stats/summary.rs, result/tpcc.rs) fails here rather than
reaching run.json as a silent null.

Real runs on SQLite files: a native open-loop run with a step plan (segments, service
latency) and the engine's merge of two clients' results (`engine.RunMerge`, as the Ray
driver calls it). tests/drivers/test_tpcc.py checks its TPC-C runs with `assert_matches_schema`
(on SQLite, MariaDB and PostgreSQL)."""

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import oltplab
from oltplab import engine
from oltplab._types import Json
from oltplab.rundir import RunWriter
from oltplab.rundir.manifest import initial_manifest
from tests.test_schema import SCHEMA_PATH, validate

SCHEMA: Json = json.loads(SCHEMA_PATH.read_text())
# The engine's latency summary in ns names the schema's `p99.9` `p99_9`, and adds `pct`
# (the --percentile option's value: run.json's summary.percentile).
LATENCY_NS_KEYS = {k.replace(".", "_") for k in SCHEMA["$defs"]["latency"]["required"]} | {"pct"}
DATA: dict[str, Any] = {"tables": 1, "table_size": 200}


def _subschema(*path: str) -> Json:
    """The schema's definition at `path` (under $defs), resolving its $refs in the whole."""
    node: Json = SCHEMA["$defs"]
    for key in path:
        node = node[key]
    return node | {"$defs": SCHEMA["$defs"]}


def _latency_summaries(result: Json) -> list[Json]:
    """Every latency summary in ns of an engine result: the run's and each segment's."""
    stretches = [result, *(result.get("segments") or [])]
    found = [s["latency_ns"] for s in stretches]
    found += [s["service_latency_ns"] for s in stretches if s.get("service_latency_ns")]
    return found


def assert_matches_schema(result: Json, run_dir: Path) -> None:
    """The engine's `result` (the binding's) and the run.json written from it in `run_dir`
    match the schema; TPC-C's summary, which passes into run.json as the engine wrote it, too."""
    validate(json.loads((run_dir / "run.json").read_text()))
    summaries = _latency_summaries(result)
    assert summaries
    for latency_ns in summaries:
        assert set(latency_ns) == LATENCY_NS_KEYS, latency_ns
    if result.get("tpcc") is not None:
        jsonschema.validate(result["tpcc"], _subschema("summary", "properties", "tpcc"))


@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite://{tmp_path_factory.mktemp('db') / 'x.db'}"
    oltplab.prepare("oltp_point_select", url, **DATA)
    return url


def _run(url: str, out: Path, **options: Any) -> tuple[Json, list[Json]]:
    """The engine's result (the binding's, before Python reads it) and its interval events."""
    intervals: list[Json] = []

    def keep(event: Json) -> None:
        if event.get("event") == "interval":
            intervals.append(event)

    result = oltplab.run("oltp_point_select", url, out=out, on_event=keep, **DATA, **options)
    assert result.complete, result.doc.error
    return result.raw, intervals


def test_a_native_open_loop_run_with_steps_matches_the_schema(
    sqlite_url: str, tmp_path: Path
) -> None:
    raw, _ = _run(sqlite_url, tmp_path / "run", threads=2, rate_steps="100,200", step_time=1)
    assert len(raw["segments"]) == 2
    assert raw["service_latency_ns"]  # open loop: the service time too
    assert_matches_schema(raw, tmp_path / "run")
    # A field renamed on the Rust side fails the check.
    drifted = raw | {
        "latency_ns": {("p999" if k == "p99_9" else k): v for k, v in raw["latency_ns"].items()}
    }
    with pytest.raises(AssertionError):
        assert_matches_schema(drifted, tmp_path / "run")


def test_the_engines_merge_of_two_clients_matches_the_schema(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Two clients' results and interval events, merged as the Ray driver merges them."""
    began = time.time()
    runs = [_run(sqlite_url, tmp_path / f"client{i}", threads=1, time=2) for i in range(2)]
    merge = engine.RunMerge(engine.build_spec("oltp_point_select", sqlite_url, {"threads": 2}))
    for events in zip(*(intervals for _, intervals in runs), strict=False):
        merged_event = merge.interval(list(events))
        assert set(merged_event["latency_ns"]) == LATENCY_NS_KEYS
    results = [raw for raw, _ in runs]
    merged = merge.finish(
        results, started_at=began, ended_at=time.time(), interrupted=False, error=None, flags=[]
    )
    assert merged["transactions"] == sum(r["transactions"] for r in results)
    # Every field of a client's result but its per-connection `threads`.
    assert merged.keys() >= results[0].keys() - {"threads"}, merged.keys() ^ results[0].keys()
    out = tmp_path / "merged"
    out.mkdir()
    manifest = initial_manifest(
        workload="oltp_point_select", options=merged["options"], db_url=sqlite_url, argv=None
    )
    RunWriter.create(out, manifest, created_dir=False).finish(merged)
    assert_matches_schema(merged, out)
