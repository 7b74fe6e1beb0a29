"""Fault: the server is SIGSTOPped (frozen: connections open, nothing answered) for longer
than the run. The run must end at its time limit, not hang (sysbench waits for ever): the
engine gives a server that answers none of the connections still waiting 10 s after the end
(END_GRACE, exec/run.rs), then abandons them. The run exits 1, and its directory says what
happened: complete false, stop_reason "error", the error naming the connections that got no
answer, and every interval up to the time limit kept, the frozen ones empty. SIGCONT is sent
whatever happens.
"""

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import oltplab
from oltplab.rundir import load_run
from tests.drivers.commands import oltplab_started
from tests.faults.servers import ENGINES, own_server
from tests.known import known

TIME_S = 4
STOP_AT_S = 1.5  # after the load started
END_GRACE_S = 10  # the engine's
MARGIN_S = 8  # a busy machine's delays


def _with_children(pid: int) -> list[int]:
    """`pid` and its children: PostgreSQL's backends are the postmaster's (not in its
    process group), and a stopped postmaster forks no more."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # The command name, in parentheses, may hold spaces: the fields follow its ')'.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                children.append(int(stat.parent.name))
    return [pid, *children]


@contextlib.contextmanager
def frozen(pid: int) -> Iterator[None]:
    """The server stopped (every process of it), then continued whatever happens."""
    pids = _with_children(pid)
    try:
        for p in pids:
            os.kill(p, signal.SIGSTOP)
        yield
    finally:
        for p in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_server_stopped_past_the_end_of_the_run(engine: str, server_dir: Path) -> None:
    cwd, out = server_dir.parent, server_dir.parent / "run"
    with own_server(engine, server_dir) as server:
        oltplab.prepare("oltp_point_select", server.url, tables=1, table_size=1000)
        pid = server.pid()
        assert pid is not None
        run = oltplab_started(
            "run", "oltp_point_select", "--db", server.url, "--threads=2", f"--time={TIME_S}",
            "--report-interval=0.5", "--out", str(out), cwd=cwd,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while not (out / "latency.hlog").exists():  # the clock has started
                assert run.poll() is None, run.communicate()
                assert time.monotonic() < deadline, "the run did not start within 30 s"
                time.sleep(0.01)
            time.sleep(STOP_AT_S)
            with frozen(pid):
                stopped = time.monotonic()
                stdout, stderr = run.communicate(timeout=TIME_S + END_GRACE_S + MARGIN_S)
                ended_s = time.monotonic() - stopped
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
    # Ended at the time limit plus the grace: not hung, not cut short.
    assert TIME_S - STOP_AT_S + END_GRACE_S - 1 < ended_s < TIME_S + END_GRACE_S + MARGIN_S
    assert run.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    assert (
        stderr.rstrip()
        .splitlines()[-1]
        .startswith("oltplab: error: the run failed: 2 connection(s)")
    )
    loaded = load_run(out)
    assert (loaded.complete, loaded.doc.stop_reason) == (False, "error")
    assert "got no answer from the server for 10 s after the run's end" in known(loaded.doc.error)
    df = loaded.intervals
    assert df["t_s"].iloc[-1] >= TIME_S - 0.01, df.to_string()
    frozen_rows = df[df["t_s"] - df["interval_s"] >= STOP_AT_S + 1.0]
    assert len(frozen_rows) >= 3, df.to_string()
    assert (frozen_rows["transactions"] == 0).all(), df.to_string()
    assert (df["transactions"] > 0).any(), df.to_string()  # it ran before the freeze
