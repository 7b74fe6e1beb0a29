import json
from collections.abc import Callable
from pathlib import Path

import pytest

from oltplab._types import Json
from oltplab.documents.run import run_manifest_json
from oltplab.exceptions import ConfigError
from oltplab.rundir import RunWriter, load_run
from oltplab.rundir.manifest import initial_manifest
from tests import synthetic


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir()
    manifest = initial_manifest(
        workload="oltp_read_write", options=synthetic.options(), db_url="sqlite:///x.db", argv=None
    )
    writer = RunWriter.create(path, manifest, created_dir=False)
    writer.on_event(synthetic.started_event())
    events = [*synthetic.intervals(2), synthetic.interval_event(3.0, transactions=0)]
    for event in events:
        writer.on_event(event)
    writer.finish(synthetic.run_result(events))
    return path


def test_run_loads_as_types_dataframe_and_hlog(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.complete
    assert run.workload == run.doc.workload.name == "oltp_read_write"
    assert run.summary is not None
    assert run.summary.transactions == 200
    df = run.intervals
    assert list(df.columns[:4]) == ["t_s", "tps", "qps", "reads_per_s"]
    assert df["transactions"].sum() == run.summary.transactions
    assert df["lat_p95_ms"].isna().tolist() == [False, False, True]  # the stall is kept
    assert df["tps"].dtype.kind == "f"
    assert len(run.hlog().tagged(None)) == 3


def test_load_run_accepts_the_run_json_path(run_dir: Path) -> None:
    assert load_run(run_dir / "run.json").path == run_dir


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run directory"):
        load_run(tmp_path)


def test_newer_schema_is_refused(run_dir: Path) -> None:
    doc = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(doc | {"schema_version": 2}))
    with pytest.raises(ConfigError, match="upgrade oltplab"):
        load_run(run_dir)


def test_run_json_round_trips_through_the_types_unchanged(run_dir: Path) -> None:
    raw = json.loads((run_dir / "run.json").read_text())
    assert run_manifest_json(load_run(run_dir).doc) == raw


def test_unknown_keys_are_ignored_and_missing_nullable_ones_read_as_null(run_dir: Path) -> None:
    """A newer oltplab of the same schema_version may add fields; an older one may lack a
    nullable one (docs/run-directory.md)."""
    doc = json.loads((run_dir / "run.json").read_text())
    doc["from_the_future"] = {"x": 1}
    del doc["summary"]["client_cpu_s"]
    (run_dir / "run.json").write_text(json.dumps(doc))
    run = load_run(run_dir)
    assert run.summary is not None
    assert run.summary.client_cpu_s is None
    assert "from_the_future" not in run_manifest_json(run.doc)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d["summary"].pop("tps"), r"run\.json: summary: 'tps' is missing$"),
        (
            lambda d: d["summary"]["latency_ms"].update({"p99.9": "slow"}),
            r"summary\.latency_ms\.p99\.9: 'slow' is not a number$",
        ),
        (lambda d: d.update(complete="yes"), r"complete: 'yes' is not true or false$"),
        (lambda d: d["tool"].update(name="hammerdb"), r"tool\.name: 'hammerdb' is none of"),
        (lambda d: d.update(segments={}), r"segments: \{\} where an array was expected$"),
    ],
)
def test_a_damaged_run_json_is_one_line_naming_the_field(
    run_dir: Path, damage: Callable[[Json], object], message: str
) -> None:
    doc = json.loads((run_dir / "run.json").read_text())
    damage(doc)
    (run_dir / "run.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=message) as raised:
        load_run(run_dir)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith(str(run_dir / "run.json"))
