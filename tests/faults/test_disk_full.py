"""The run directory's disk fills up: a small tmpfs mounted by the test (root is needed;
without it the tests skip and say so). Another process fills the disk mid-run: the run stops
with one line naming the cause and the fix (exit 1), and everything measured before is kept
and readable: complete intervals.csv rows, the latency log, a run.json that says incomplete.
`oltplab import` onto a full disk: one line, exit 1."""

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oltplab.rundir import load_run
from tests.sysbench_import import logs
from tests.test_cli_e2e import _env, oltplab_cmd

TMPFS_SIZE = "2m"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            "DISK-FULL TESTS NOT RUN: cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): "
            + mounted.stderr.strip()
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(disk: Path) -> None:
    """Takes every free byte of `disk`, as another process writing to it would."""
    with (disk / "filler").open("wb") as f, contextlib.suppress(OSError):
        chunk = b"\0" * 65536
        while True:
            f.write(chunk)
            f.flush()
    with contextlib.suppress(OSError), (disk / "filler-tail").open("wb") as f:
        for _ in range(65536):
            f.write(b"\0")
            f.flush()


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_disk_full_mid_run_keeps_what_was_measured(tmp_path: Path, small_disk: Path) -> None:
    db = f"sqlite://{tmp_path / 'sb.db'}"  # the database is not on the small disk
    assert oltplab_cmd("prepare", "--db", db, "--table-size=1000", cwd=tmp_path).returncode == 0
    out = small_disk / "run"
    child = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "run", "oltp_point_select", "--db", db,
         "--time=60", "--report-interval=0.1", "--out", str(out)],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    intervals = out / "intervals.csv"
    deadline = time.monotonic() + 60
    while not (intervals.exists() and len(intervals.read_text().splitlines()) > 5):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    _fill(small_disk)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 1, err
    line = _one_line(err)
    assert "No space left on device" in line, line
    assert "--out" in line, line  # the fix
    assert str(out) in line, line  # where the data is
    # Nothing measured before is lost: every complete row is readable, none is torn.
    run = load_run(out)
    assert run.complete is False
    frame = run.intervals
    assert len(frame) >= 5
    assert frame["tps"].notna().all()
    assert frame["t_s"].is_monotonic_increasing
    assert intervals.read_text().endswith("\n")
    entries = run.hlog().entries
    assert entries, "the latency log lost its histograms"
    assert all(e.decode().get_total_count() >= 0 for e in entries)


def test_disk_full_when_importing(tmp_path: Path, small_disk: Path) -> None:
    (tmp_path / "sb.log").write_text(logs.RATE)
    _fill(small_disk)
    p = oltplab_cmd(
        "import", str(tmp_path / "sb.log"), "--out", str(small_disk / "imp"), cwd=tmp_path
    )
    assert p.returncode == 1, p.stderr
    line = _one_line(p.stderr)
    assert "No space left on device" in line, line
    assert not (small_disk / "imp" / "run.json").exists()


def test_the_filler_really_fills(small_disk: Path) -> None:
    """The tests above rely on it: after _fill, not one more byte fits."""
    _fill(small_disk)
    fd = os.open(small_disk / "probe", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError, match="No space left on device"):
            os.write(fd, b"x" * 8192)
    finally:
        os.close(fd)
