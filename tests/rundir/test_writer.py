"""The run directory is written as the run progresses, and never looks complete early."""

import csv
import json
from datetime import datetime
from pathlib import Path

import pytest

from oltplab.documents.run import run_manifest_json
from oltplab.exceptions import ConfigError
from oltplab.rundir import RunWriter, create_default_run_dir, create_run_dir, load_run
from oltplab.rundir.manifest import initial_manifest
from tests import synthetic


def _writer(run_dir: Path) -> RunWriter:
    manifest = initial_manifest(
        workload="oltp_read_write",
        options=synthetic.options(),
        db_url="sqlite:///x.db",
        argv=["oltplab", "run"],
    )
    run_dir.mkdir(exist_ok=True)
    return RunWriter.create(run_dir, manifest, created_dir=True)


def _run_json(run_dir: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads((run_dir / "run.json").read_text())
    return doc


def test_files_appear_as_the_run_progresses(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "r")
    assert _run_json(writer.run_dir)["complete"] is False
    writer.on_event(synthetic.started_event())
    assert _run_json(writer.run_dir)["started_at"] == "2025-11-21T04:40:00.500Z"
    events = synthetic.intervals(2)
    writer.on_event(events[0])
    # Flushed as it arrives: readable while the run goes on.
    with (writer.run_dir / "intervals.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    assert rows[0]["t_s"] == "1"
    assert (writer.run_dir / "latency.hlog").read_text().count("HISTF") == 2
    writer.on_event(events[1])
    manifest = writer.finish(synthetic.run_result(events))
    assert manifest.complete is True
    assert _run_json(writer.run_dir) == run_manifest_json(manifest)
    run = load_run(writer.run_dir)
    assert len(run.intervals) == 2


def test_abort_marks_incomplete_and_keeps_what_was_measured(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "r")
    writer.on_event(synthetic.started_event())
    writer.on_event(synthetic.interval_event(1.0))
    manifest = writer.abort(stop_reason="error", error="disk I/O error")
    assert (manifest.complete, manifest.stop_reason, manifest.error) == (
        False,
        "error",
        "disk I/O error",
    )
    assert len(load_run(writer.run_dir).intervals) == 1


def test_discard_removes_everything_it_created(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "r")
    writer.discard()
    assert not (tmp_path / "r").exists()


def test_hlog_exists_even_without_intervals(tmp_path: Path) -> None:
    writer = _writer(tmp_path / "r")
    writer.finish(synthetic.run_result([synthetic.interval_event(1.0, transactions=0)]))
    assert (writer.run_dir / "latency.hlog").read_text().startswith("#[Logged with oltplab")


def test_create_run_dir_accepts_new_or_empty_only(tmp_path: Path) -> None:
    assert create_run_dir(tmp_path / "a" / "b") is True
    assert create_run_dir(tmp_path / "a" / "b") is False  # empty: fine
    (tmp_path / "a" / "b" / "run.json").write_text("{}")
    with pytest.raises(ConfigError, match="not empty"):
        create_run_dir(tmp_path / "a" / "b")
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match="is a file"):
        create_run_dir(tmp_path / "f")
    with pytest.raises(ConfigError, match="cannot create"):
        create_run_dir(tmp_path / "f" / "sub")


def test_default_run_dirs_never_collide(tmp_path: Path) -> None:
    now = datetime(2025, 11, 21, 12, 45, 0)
    first = create_default_run_dir(tmp_path, "oltp_read_only", now)
    second = create_default_run_dir(tmp_path, "oltp_read_only", now)
    assert first.name == "20251121-124500-oltp_read_only"
    assert second.name == "20251121-124500-oltp_read_only-2"
