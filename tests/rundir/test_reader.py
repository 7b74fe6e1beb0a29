import json
from pathlib import Path

import pytest

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


def test_run_loads_as_dict_dataframe_and_hlog(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.complete
    assert run["workload"]["name"] == "oltp_read_write"
    assert run.summary is not None
    assert run.summary["transactions"] == 200
    df = run.intervals
    assert list(df.columns[:4]) == ["t_s", "tps", "qps", "reads_per_s"]
    assert df["transactions"].sum() == run.summary["transactions"]
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
