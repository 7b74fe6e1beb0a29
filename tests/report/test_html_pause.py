"""A real MariaDB paused mid-run (SIGSTOP for 2 s, as tests/drivers/test_pause.py does):
the report's timeline marks the stall where the server stopped and resumed, read from the
chart's own data, and its tps line drops to zero there."""

from collections.abc import Iterator
from pathlib import Path

import pytest

import oltplab
from oltplab.report.html import build_report
from oltplab.servers import MariaDBServer, ServerSettings
from tests.drivers.test_pause import Pauser

pytestmark = pytest.mark.serial  # a stall's start measured against the signal's clock

THREADS = 4
TIME_S = 10.0  # 20 half-second intervals: enough for MSER-5 to judge
INTERVAL_S = 0.5
PAUSE_AT_S = 4.0
PAUSE_S = 2.0
EDGE_S = 0.05  # interval edges vs. the signals: the engine's clock starts a little earlier


@pytest.fixture(scope="module")
def server(module_server_dir: Path) -> Iterator[MariaDBServer]:
    """A MariaDB of this module's own: SIGSTOP would freeze every test sharing the session's."""
    small = ServerSettings(max_connections=50, variables={"innodb_buffer_pool_size": "32M"})
    with MariaDBServer(module_server_dir, small) as server:
        oltplab.prepare("oltp_point_select", db=server.url, tables=1, table_size=1000)
        yield server


def test_the_stall_is_marked_when_the_server_was_paused(
    server: MariaDBServer, tmp_path: Path
) -> None:
    pid = server.pid()
    assert pid is not None
    out = tmp_path / "paused"
    with Pauser(pid, PAUSE_AT_S, PAUSE_S) as pauser:
        run = oltplab.run(
            "oltp_point_select",
            db=server.url,
            out=out,
            on_event=pauser.on_event,
            threads=THREADS,
            time=TIME_S,
            report_interval=INTERVAL_S,
        )
    assert run.complete, run.doc.error
    assert pauser.stop_s is not None
    assert pauser.cont_s is not None

    report = build_report([out])
    timeline = next(c for c in report.charts if c.name.startswith("timeline-"))
    data = timeline.spec()["datasets"]
    stalls = data["stalls"]
    assert len(stalls) == 1, stalls
    stall = stalls[0]
    # The start is measured within the interval, to the precision the analysis states: the
    # range the evidence bounds it to (docs/analysis.md, "How long a stall lasted"), which
    # must hold SIGSTOP; the chart marks the estimate inside it. The stall ends by the
    # interval in which SIGCONT came.
    measured = report.data.runs[0].analysis.to_document().stalls[0]
    assert measured.start_range_s is not None
    lo, hi = measured.start_range_s
    assert lo - EDGE_S <= pauser.stop_s <= hi + EDGE_S, (lo, pauser.stop_s, hi)
    assert lo <= measured.start_s <= hi
    assert stall["start_s"] == pytest.approx(measured.start_s, rel=1e-4)  # 5 digits drawn
    assert (
        pauser.cont_s - INTERVAL_S - EDGE_S <= stall["end_s"] <= pauser.cont_s + INTERVAL_S + EDGE_S
    )
    # The drawn line: below the stall threshold in every interval wholly inside the pause
    # (the marked end may run into the interval of SIGCONT on a busy host, within the
    # bound above, and that interval holds the resumed load), the run's pace before it.
    threshold = measured.threshold_tps
    inside = [
        r["tps"]
        for r in data["tps"]
        if pauser.stop_s + EDGE_S <= r["t_s"] - INTERVAL_S and r["t_s"] <= pauser.cont_s - EDGE_S
    ]
    before = [r["tps"] for r in data["tps"] if r["t_s"] <= pauser.stop_s - EDGE_S]
    assert len(inside) >= (PAUSE_S / INTERVAL_S) - 2, inside  # however the grid falls
    assert max(inside) < threshold, (inside, threshold)
    # Before it, the line stays above the threshold (no interval there is a stall: the one
    # stall above). Not a margin above it: on a loaded host the pace before the pause swung
    # from 30,000 to 7,000 tps against a level of 35,000 (the threshold is a tenth of it).
    assert min(before[1:]) > threshold, (before, threshold)
