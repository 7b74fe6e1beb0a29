"""The real sysbench 1.0.20 (Debian's package) and the `oltplab` command, run as
subprocesses against a server's URL."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import oltplab

_TIMEOUT_S = 120


def sysbench_connection(url: str, database: str) -> list[str]:
    """sysbench's options for a mysql:// or postgresql:// URL over TCP, to `database`."""
    parts = urlsplit(url)
    driver = "mysql" if parts.scheme == "mysql" else "pgsql"
    return [
        f"--db-driver={driver}",
        f"--{driver}-host={parts.hostname}",
        f"--{driver}-port={parts.port}",
        f"--{driver}-user={unquote(parts.username or '')}",
        f"--{driver}-password={unquote(parts.password or '')}",
        f"--{driver}-db={database}",
    ]


def with_database(url: str, database: str) -> str:
    """`url` naming another database."""
    return urlsplit(url)._replace(path=f"/{database}").geturl()


def sysbench(*args: str, cwd: Path) -> str:
    """Runs /usr/bin/sysbench; fails the test, with its output, when it fails."""
    program = shutil.which("sysbench") or "/usr/bin/sysbench"
    done = subprocess.run(
        [program, *args], cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"sysbench {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def _oltplab_env() -> dict[str, str]:
    # The package this test imported, also for the child (a checkout without an install).
    package_root = str(Path(oltplab.__file__).resolve().parent.parent)
    return os.environ | {
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])
    }


def oltplab_done(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout_s: float = _TIMEOUT_S
) -> "subprocess.CompletedProcess[str]":
    """Runs `oltplab` (this checkout's package) to its end; `env` adds variables."""
    return subprocess.run(
        [sys.executable, "-m", "oltplab", *args],
        cwd=cwd,
        env=_oltplab_env() | (env or {}),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def oltplab_cli(*args: str, cwd: Path) -> str:
    """Runs `oltplab`; fails the test when it fails."""
    done = oltplab_done(*args, cwd=cwd)
    assert done.returncode == 0, f"oltplab {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def oltplab_started(*args: str, cwd: Path) -> "subprocess.Popen[str]":
    """`oltplab` started in the background, its output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "oltplab", *args],
        cwd=cwd,
        env=_oltplab_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_intervals(child: "subprocess.Popen[str]", out: Path, n: int) -> None:
    """Waits until the run `child` writes in `out` has `n` intervals (fails if it ends first)."""
    intervals = out / "intervals.csv"
    deadline = time.monotonic() + 60
    while not (intervals.exists() and len(intervals.read_text().splitlines()) > n):
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, f"not {n} intervals within 60 s"
        time.sleep(0.1)
