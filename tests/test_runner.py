"""The runner against the fake engine: default database, run directory, failures."""

from pathlib import Path

import pytest

from oltplab import runner
from oltplab._types import Json
from oltplab.defaultdb import DefaultDb
from oltplab.exceptions import ConfigError, DriverError, NotPreparedError
from oltplab.rundir import load_run
from tests.fakecore import FakeCore


def _run(root: Path, **kwargs: object) -> runner.RunResult:
    options = kwargs.pop("options", {"time": 3})
    db = kwargs.pop("db", None)
    return runner.run("oltp_read_write", db, options, results_root=root, **kwargs)  # type: ignore[arg-type]


def test_first_run_prepares_the_default_database_then_reuses_it(
    fake_core: FakeCore, tmp_path: Path
) -> None:
    prepared: list[DefaultDb] = []
    hooks = runner.Hooks(on_auto_prepare=prepared.append)
    first = _run(tmp_path, hooks=hooks)
    assert [p.path for p in prepared] == [tmp_path / "sbtest.db"]
    assert [c for c, _ in fake_core.calls] == ["prepare", "run"]
    _run(tmp_path, hooks=hooks, options={"time": 3, "threads": 4})
    assert len(prepared) == 1  # --threads does not change the data
    _run(tmp_path, hooks=hooks, options={"time": 3, "table_size": 100})
    assert len(prepared) == 2
    assert first.complete
    assert first.path.parent == tmp_path
    assert fake_core.calls[-1][1]["db"] == f"sqlite://{(tmp_path / 'sbtest.db').resolve()}"


def test_run_directory_contents(fake_core: FakeCore, tmp_path: Path) -> None:
    events: list[Json] = []
    result = _run(
        tmp_path,
        out=tmp_path / "r",
        argv=["oltplab", "run"],
        hooks=runner.Hooks(on_event=events.append),
    )
    run = load_run(tmp_path / "r")
    assert run.doc == result.doc
    assert run.doc.argv == ("oltplab", "run")
    assert run.options["time"] == 3
    assert len(run.intervals) == 3
    assert run.summary is not None
    assert run.intervals["transactions"].sum() == run.summary.transactions
    assert [e["event"] for e in events] == ["started", "interval", "interval", "interval"]
    assert result.raw["transactions"] == 300
    assert result.stop_reason == "time"


def test_interrupted_run_keeps_what_was_measured(fake_core: FakeCore, tmp_path: Path) -> None:
    fake_core.stop_reason, fake_core.stop_after = "interrupted", 2
    result = _run(tmp_path, out=tmp_path / "r")
    assert not result.complete
    assert result.stop_reason == "interrupted"
    assert len(load_run(tmp_path / "r").intervals) == 2


def test_failure_before_the_load_leaves_nothing(fake_core: FakeCore, tmp_path: Path) -> None:
    with pytest.raises(NotPreparedError):
        _run(tmp_path, db=f"sqlite://{tmp_path}/missing.db", out=tmp_path / "r")
    assert not (tmp_path / "r").exists()
    fake_core.raise_before_start = ConfigError("--threads must be an integer from 1")
    with pytest.raises(ConfigError):
        _run(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sbtest.db", "sbtest.db.json"]


def test_failure_after_the_start_marks_the_run_incomplete(
    fake_core: FakeCore, tmp_path: Path
) -> None:
    fake_core.raise_after_start = DriverError("database disk image is malformed")
    with pytest.raises(DriverError):
        _run(tmp_path, out=tmp_path / "r")
    run = load_run(tmp_path / "r")
    assert (run.complete, run.doc.stop_reason, run.doc.error) == (
        False,
        "error",
        "database disk image is malformed",
    )
    fake_core.raise_after_start = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, out=tmp_path / "r2")
    assert load_run(tmp_path / "r2").doc.stop_reason == "interrupted"


def test_bad_out_fails_before_any_work(fake_core: FakeCore, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "x").write_text("")
    with pytest.raises(ConfigError, match="not empty"):
        _run(tmp_path, out=tmp_path / "r")
    assert fake_core.calls == []


def test_unknown_option_fails_before_any_work(fake_core: FakeCore, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown option --bogus"):
        _run(tmp_path, options={"bogus": 1})
    assert fake_core.calls == []
    assert list(tmp_path.iterdir()) == []


def test_prepare_and_cleanup_with_and_without_db(fake_core: FakeCore, tmp_path: Path) -> None:
    db = f"sqlite://{tmp_path}/x.db"
    assert runner.prepare("oltp_read_write", db, {"tables": 2})["tables"] == 2
    assert fake_core.calls[-1][1]["target"]["create"] is True
    assert runner.cleanup("oltp_read_write", db, {})["tables"] == 1
    runner.prepare("oltp_read_write", None, {}, results_root=tmp_path)
    assert (tmp_path / "sbtest.db").exists()
    removed = runner.cleanup("oltp_read_write", None, {}, results_root=tmp_path)
    assert removed["removed"] is True
    assert not (tmp_path / "sbtest.db").exists()
