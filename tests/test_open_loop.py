"""Open loop and warm-up through the Python API, on a real SQLite file."""

from pathlib import Path

import pytest

import oltplab
from tests.known import known


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite://{tmp_path_factory.mktemp('ol') / 'sb.db'}"
    oltplab.prepare("oltp_point_select", url, table_size=1000)
    return url


def test_fixed_rate_run_records_response_and_service_time(db: str, tmp_path: Path) -> None:
    result = oltplab.run(
        "oltp_point_select", db, out=tmp_path / "r", rate=200, time=2, report_interval=0.5
    )
    summary = result.summary
    assert summary is not None
    assert summary.open_loop is not None
    assert summary.open_loop.rate_per_s == 200
    assert 300 <= summary.transactions <= 500
    service = summary.service_latency_ms
    assert service is not None
    # Response time runs from the intended start, so it is never below the service time.
    assert known(summary.latency_ms.p50) >= known(service.p50) * 0.99
    iv = result.intervals
    assert iv["svc_p95_ms"].notna().any()
    assert iv["transactions"].sum() == summary.transactions


def test_warmup_rows_are_stored_but_left_out_of_the_summary(db: str, tmp_path: Path) -> None:
    result = oltplab.run(
        "oltp_point_select", db, out=tmp_path / "w", warmup_time=1, time=1, report_interval=0.5
    )
    summary = result.summary
    assert summary is not None
    iv = result.intervals
    warm = iv[iv["phase"] == "warmup"]
    measured = iv[iv["phase"] == "run"]
    assert len(warm) >= 2
    assert warm["transactions"].sum() > 0
    assert measured["transactions"].sum() == summary.transactions
    assert summary.warmup_s == 1
    assert summary.duration_s == pytest.approx(1.0, abs=0.2)
    assert summary.service_latency_ms is None
