"""How a run ends, on a real MariaDB (issue 24).

- At `--time`, no transaction starts and those in flight finish within milliseconds: that
  drain belongs to the last interval, not to a stub after it (a 4-ms row of low tps that every
  timeline drew as a plunge at the run's end). The report's timeline draws no step narrower
  than half an interval.
- A run whose last interval is a few milliseconds long (here `--events`, with uniform arrivals
  ending some 30 ms after a boundary): the client's CPU in it is measured with a nanosecond clock,
  and such an interval is not judged for saturation (it flagged runs whose client used half
  a core)."""

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oltplab
from oltplab.report.html import build_report
from oltplab.servers import MariaDBServer

INTERVAL_S = 0.5
DATA: dict[str, Any] = {"tables": 1, "table_size": 1000}


@pytest.fixture(scope="module")
def server(mariadb_empty_db: MariaDBServer) -> MariaDBServer:
    oltplab.prepare("oltp_point_select", db=mariadb_empty_db.url, **DATA)
    return mariadb_empty_db


def _intervals(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "intervals.csv")


def test_the_time_limit_leaves_no_stub(server: MariaDBServer, tmp_path: Path) -> None:
    out = tmp_path / "timed"
    time_s = 3.0
    run = oltplab.run(
        "oltp_point_select",
        db=server.url,
        out=out,
        threads=4,
        time=time_s,
        report_interval=INTERVAL_S,
        **DATA,
    )
    assert run.complete
    rows = _intervals(out)
    assert (rows["interval_s"] >= 0.5 * INTERVAL_S).all(), rows[["t_s", "interval_s"]]
    # The last interval runs from the last boundary to the end of the drain.
    assert time_s <= rows["t_s"].iloc[-1] < time_s + 0.5 * INTERVAL_S
    assert run.summary is not None
    assert rows["transactions"].sum() == run.summary.transactions

    timeline = next(c for c in build_report([out]).charts if c.name.startswith("timeline-"))
    drawn = pd.DataFrame(timeline.spec()["datasets"]["tps"])
    steps = drawn["t_s"].diff().dropna()
    assert len(steps) == len(rows)
    assert (steps >= 0.5 * INTERVAL_S).all(), drawn


def test_a_last_interval_of_a_few_ms_is_measured_not_judged(
    server: MariaDBServer, tmp_path: Path
) -> None:
    out = tmp_path / "events"
    rate = 500
    run = oltplab.run(
        "oltp_point_select",
        db=server.url,
        out=out,
        threads=2,
        rate=rate,
        rate_arrivals="uniform",
        events=rate + 15,  # the last arrival some 30 ms after the 1-s boundary
        report_interval=1.0,
        **DATA,
    )
    assert run.complete
    rows = _intervals(out)
    # Some 40 ms; on a host so busy that the arrivals lag, longer, but still one too short to
    # judge (half the report interval).
    assert rows["interval_s"].iloc[-1] < 0.5, rows[["t_s", "interval_s"]]
    # Measured, not rounded to 10-ms ticks: never more than every core of the machine.
    cores = os.cpu_count() or 1
    assert (rows["client_cpu_pct"] <= 100 * cores + 10).all(), rows["client_cpu_pct"]
    assert rows["client_cpu_pct"].iloc[-1] > 0
    assert "client_cpu_saturated" not in run.flags
