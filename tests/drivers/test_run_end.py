"""How a run ends, on a real MariaDB (issue 24).

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
from oltplab.servers import MariaDBServer

INTERVAL_S = 0.5
DATA: dict[str, Any] = {"tables": 1, "table_size": 1000}


@pytest.fixture(scope="module")
def server(mariadb_empty_db: MariaDBServer) -> MariaDBServer:
    oltplab.prepare("oltp_point_select", db=mariadb_empty_db.url, **DATA)
    return mariadb_empty_db


def _intervals(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "intervals.csv")


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
        report_interval=INTERVAL_S,
        **DATA,
    )
    assert run.complete
    rows = _intervals(out)
    assert rows["interval_s"].iloc[-1] < 0.1, rows[["t_s", "interval_s"]]
    # Measured, not rounded to 10-ms ticks: never more than every core of the machine.
    cores = os.cpu_count() or 1
    assert (rows["client_cpu_pct"] <= 100 * cores + 10).all(), rows["client_cpu_pct"]
    assert rows["client_cpu_pct"].iloc[-1] > 0
    assert "client_cpu_saturated" not in run["flags"]
