"""SIGTERM stops oltplab as Ctrl-C does: the run stops gracefully, what was measured is kept
in a run directory marked incomplete, and the exit code is 143 (128 + SIGTERM, as a process
killed by it reports; Ctrl-C is 130). For `oltplab run` and the drop-in `oltplab sysbench`."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oltplab.rundir import load_run
from tests.test_cli_e2e import _env, assert_consistent, oltplab_cmd

SMALL = ["--table-size=1000"]


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "oltplab", *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_intervals(child: subprocess.Popen[str], intervals: Path, rows: int) -> None:
    deadline = time.monotonic() + 60
    while not (intervals.exists() and len(intervals.read_text().splitlines()) > rows):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, f"fewer than {rows} intervals within 60 s"
        time.sleep(0.05)


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite://{tmp_path / 'sb.db'}"
    assert oltplab_cmd("prepare", "--db", url, *SMALL, cwd=tmp_path).returncode == 0
    return url


@pytest.mark.parametrize(
    "command",
    [
        ["run", "oltp_point_select", "--time=60", "--report-interval=0.2"],
        ["sysbench", "oltp_point_select", "run", "--db-driver=sqlite", "--time=60"],
    ],
    ids=["run", "sysbench"],
)
def test_sigterm_keeps_what_was_measured_and_exits_143(
    tmp_path: Path, db: str, command: list[str]
) -> None:
    if command[0] == "run":
        args = [*command, "--db", db, "--out=r"]
    else:
        args = [*command, f"--sqlite-db={db.removeprefix('sqlite://')}", "--out=r"]
    started = time.monotonic()
    child = _start(args, tmp_path)
    _wait_for_intervals(child, tmp_path / "r" / "intervals.csv", 3)
    child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=60)
    assert time.monotonic() - started < 50, "the run went on after SIGTERM"
    assert child.returncode == 143, (out, err)
    assert "Traceback" not in err
    run = load_run(tmp_path / "r")
    assert run.complete is False
    assert run.doc.stop_reason == "interrupted"
    assert len(run.intervals) >= 3
    assert_consistent(run)


def test_sigterm_while_preparing_leaves_no_usable_half_table(tmp_path: Path) -> None:
    """The default database is prepared in a temporary file that replaces the old one only
    on success: a SIGTERM during prepare exits 143 and leaves nothing `run` would use."""
    child = _start(["prepare", "--table-size=2000000"], tmp_path)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "oltplab-runs").glob(".sbtest.db.preparing-*")):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 143, err
    assert "Traceback" not in err
    assert not (tmp_path / "oltplab-runs" / "sbtest.db").exists()
    assert not list((tmp_path / "oltplab-runs").glob(".sbtest.db.preparing-*"))
