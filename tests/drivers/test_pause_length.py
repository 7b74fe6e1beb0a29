"""Issue 11's stall length on real servers: MariaDB and PostgreSQL are paused (SIGSTOP to
the server and its child processes, PostgreSQL's backends, then SIGCONT) for 1.4 s from
2.3 s into a run, with 1-s and 0.5-s intervals, in closed loop and open loop (--rate).
`oltplab show`'s analysis must report one stall starting when the server stopped and lasting
the pause, within 0.3 s.

With 1-s intervals this pause leaves no interval below the threshold at all (0.3 of the rate
on either side of the boundary): only the waits say it happened, and how long. On a host
slow to resume, the interval it ended in may fall below the threshold after all; the longest
wait is then inside the stall (tests/analysis/test_stall_length.py's slow resumption).
Each engine gets a server of this module's own: a paused shared server would freeze the
other tests."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import oltplab
from oltplab.analysis.run_analysis import analyse
from oltplab.servers import MariaDBServer, PostgresServer, ServerSettings
from oltplab.servers.base import ManagedServer
from tests.conftest import fresh_server_dir
from tests.drivers.test_pause import Pauser

pytestmark = pytest.mark.serial  # stall lengths measured against the signals' clock

PAUSE_AT_S = 2.3
PAUSE_S = 1.4
TIME_S = 7.0
THREADS = 4
RATE = 200
TOLERANCE_S = 0.3
DATA: dict[str, Any] = {"tables": 1, "table_size": 1000}


def _server(cls: type[ManagedServer], servers_root: Path) -> Iterator[ManagedServer]:
    with (
        fresh_server_dir(servers_root) as server_dir,
        cls(server_dir, ServerSettings(max_connections=50)) as server,
    ):
        oltplab.prepare("oltp_point_select", db=server.url, **DATA)
        yield server


@pytest.fixture(
    scope="module", params=[MariaDBServer, PostgresServer], ids=["mariadb", "postgresql"]
)
def server(request: pytest.FixtureRequest, servers_root: Path) -> Iterator[ManagedServer]:
    yield from _server(request.param, servers_root)


@pytest.mark.parametrize("interval_s", [1.0, 0.5])
@pytest.mark.parametrize("rate", [0, RATE], ids=["closed", "open"])
def test_a_paused_server_is_reported_for_the_length_of_its_pause(
    server: ManagedServer, tmp_path: Path, interval_s: float, rate: int
) -> None:
    pid = server.pid()
    assert pid is not None
    with Pauser(pid, PAUSE_AT_S, PAUSE_S, children=True) as pauser:
        run = oltplab.run(
            "oltp_point_select",
            db=server.url,
            out=tmp_path / "run",
            on_event=pauser.on_event,
            threads=THREADS,
            time=TIME_S,
            report_interval=interval_s,
            rate=rate,
            rand_seed=42,
            **DATA,
        )
    assert run.complete, run.doc.error
    assert pauser.stop_s is not None, "the server was not paused"
    assert pauser.cont_s is not None
    paused_s = pauser.cont_s - pauser.stop_s
    analysis = analyse(run.path)
    assert analysis.whole is not None
    stalls = analysis.whole.steady.stalls
    shown = run.intervals[["t_s", "interval_s", "transactions", "lat_max_ms"]].to_string()
    assert len(stalls) == 1, (stalls, pauser.stop_s, pauser.cont_s, shown)
    stall = stalls[0]
    seen = (stall, pauser.stop_s, pauser.cont_s, shown)
    assert stall.duration_s == pytest.approx(paused_s, abs=TOLERANCE_S), seen
    assert stall.start_s == pytest.approx(pauser.stop_s, abs=TOLERANCE_S), seen
    assert stall.method == "latency"
    doc = analysis.to_document().stalls[0]
    assert doc.duration_s == pytest.approx(stall.duration_s)
    assert doc.estimated_from == "latency"
