"""Step plans (--rate-steps, --thread-steps with --step-time) through the Python API, on a
real SQLite file: each step is a segment in run.json, and its intervals carry its step."""

import json
from pathlib import Path

import pytest

import oltplab
from oltplab.exceptions import ConfigError
from oltplab.report.oltplab_text import summary_text
from tests.known import known
from tests.test_schema import validate


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite://{tmp_path_factory.mktemp('steps') / 'sb.db'}"
    oltplab.prepare("oltp_point_select", url, table_size=1000)
    return url


def test_rate_steps_are_segments_with_their_own_summary(db: str, tmp_path: Path) -> None:
    result = oltplab.run(
        "oltp_point_select",
        db,
        out=tmp_path / "r",
        rate_steps="50,150",
        step_time=1,
        warmup_time=0.5,
        rate_arrivals="uniform",
        report_interval=0.25,
    )
    manifest = json.loads((result.path / "run.json").read_text())
    validate(manifest)
    assert manifest["load"]["time_s"] == 2
    assert manifest["load"]["rate_per_s"] == 100  # the mean target over the measured time
    summary = manifest["summary"]
    segments = manifest["segments"]
    assert [(s["step"], s["rate_per_s"]) for s in segments] == [(0, 50), (1, 150)]
    assert 35 <= segments[0]["tps"] <= 65
    assert 110 <= segments[1]["tps"] <= 190
    assert sum(s["transactions"] for s in segments) == summary["transactions"]
    for s in segments:
        assert s["latency_ms"]["p99"] is not None
        assert s["service_latency_ms"] is not None
        assert s["tps"] == pytest.approx(s["transactions"] / s["duration_s"])
    iv = result.intervals
    assert iv["step"].dtype == "Int64"
    assert iv[iv["phase"] == "warmup"]["step"].isna().all()
    for s in segments:
        rows = iv[iv["step"] == s["step"]]
        assert rows["transactions"].sum() == s["transactions"]
        assert rows["t_s"].iloc[-1] == pytest.approx(s["end_s"], abs=1e-6)
    text = summary_text(result.doc, result.path)
    assert "    step 0:         50/s target, 1 thread: " in text
    assert "    step 1:         150/s target, 1 thread: " in text


def test_thread_steps_open_the_largest_steps_connections(db: str, tmp_path: Path) -> None:
    result = oltplab.run(
        "oltp_point_select", db, out=tmp_path / "t", thread_steps="1,2", step_time=0.5
    )
    validate(json.loads((result.path / "run.json").read_text()))
    assert result.doc.load.threads == 2
    segments = known(result.doc.segments)
    assert [s.threads for s in segments] == [1, 2]
    assert all(s.service_latency_ms is None and s.rate_per_s == 0 for s in segments)
    assert result.intervals["step"].notna().all()


def test_without_a_plan_segments_are_null_and_the_step_column_empty(
    db: str, tmp_path: Path
) -> None:
    result = oltplab.run("oltp_point_select", db, out=tmp_path / "n", time=0.3)
    assert result.doc.segments is None
    assert result.intervals["step"].isna().all()
    assert (result.path / "intervals.csv").read_text().splitlines()[0].endswith(",step")


def test_a_time_that_disagrees_with_the_plan_is_refused(db: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give --time 2"):
        oltplab.run(
            "oltp_point_select", db, out=tmp_path / "e", rate_steps="10,20", step_time=1, time=5
        )
    assert not (tmp_path / "e").exists()
