"""End to end: the `oltplab` command as a subprocess, through the real engine, on SQLite.

They need the compiled engine (`make build-dev`); without it they fail, never skip.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

import oltplab
from oltplab.documents.run import run_manifest_json
from oltplab.rundir import Run, load_run
from tests.drivers.commands import wait_for_intervals
from tests.test_schema import validate

SMALL = ["--table-size=1000"]  # keeps the automatic prepare quick


def oltplab_cmd(*args: str, cwd: Path, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oltplab", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def _env() -> dict[str, str]:
    # The package this test imported, also for the child (a checkout without an install).
    package_root = str(Path(oltplab.__file__).resolve().parent.parent)
    return os.environ | {
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])
    }


def _run_dirs(cwd: Path) -> list[Path]:
    root = cwd / "oltplab-runs"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


def _hlog_counts(run: Run) -> list[int]:
    """Transaction counts per interval, decoded by an independent HdrHistogram reader."""
    reader = HistogramLogReader(
        str(run.path / "latency.hlog"), HdrHistogram(1, 3_600_000_000_000, 3)
    )
    counts = []
    while (h := reader.get_next_interval_histogram()) is not None:
        if h.get_tag() is None:
            counts.append(h.get_total_count())
    reader.close()
    return counts


def assert_consistent(run: Run) -> None:
    """The run directory agrees with itself: rows add up to the totals, the hlog too."""
    raw = json.loads((run.path / "run.json").read_text())
    validate(raw)
    assert run_manifest_json(run.doc) == raw  # real output round-trips through the types
    summary = run.summary
    assert summary is not None
    df = run.intervals
    assert df["transactions"].sum() == summary.transactions
    assert df["queries"].sum() == summary.queries.total
    assert df["errors"].sum() == summary.errors.total
    assert df["reconnects"].sum() == summary.reconnects
    assert ((df["tps"] * df["interval_s"]) - df["transactions"]).abs().max() < 1  # rate x length
    hlog_counts = _hlog_counts(run)
    assert hlog_counts == df["transactions"].tolist()
    assert sum(hlog_counts) == summary.transactions
    assert run.doc.histograms is not None
    whole = HdrHistogram.decode(run.doc.histograms["transactions"])
    assert whole.get_total_count() == summary.transactions
    assert df["t_s"].is_monotonic_increasing


def test_run_on_the_default_sqlite_database(tmp_path: Path) -> None:
    p = oltplab_cmd("run", "--time", "2", "--threads=2", *SMALL, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "oltplab: preparing oltplab-runs/sbtest.db" in p.stderr
    assert "Threads started!" in p.stdout
    assert "[ 1s ] thds: 2 tps: " in p.stdout
    assert "\nSQL statistics:\n" in p.stdout
    assert "\nThreads fairness:\n" in p.stdout
    (run_dir,) = _run_dirs(tmp_path)
    run = load_run(run_dir)
    assert run.complete
    assert run.doc.stop_reason == "time"
    assert run.doc.target.driver == "sqlite"
    assert run.options["table_size"] == 1000
    assert run.summary is not None
    assert run.summary.transactions > 0
    # sysbench's oltp_read_write: 14 reads, 4 writes, 2 others a transaction
    assert run.summary.queries.read == 14 * run.summary.transactions
    assert_consistent(run)


def test_the_default_database_is_reused_until_data_options_change(tmp_path: Path) -> None:
    assert oltplab_cmd("run", "--time=1", *SMALL, cwd=tmp_path).returncode == 0
    again = oltplab_cmd("run", "oltp_read_only", "--time=1", "--threads=2", *SMALL, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "preparing" not in again.stderr
    other = oltplab_cmd("run", "--time=1", "--table-size=500", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    assert "preparing" in other.stderr
    assert len(_run_dirs(tmp_path)) == 3


def test_events_limit(tmp_path: Path) -> None:
    p = oltplab_cmd("run", "oltp_point_select", "--events=500", "--time=0", *SMALL, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    run = load_run(_run_dirs(tmp_path)[0])
    assert run.doc.stop_reason == "events"
    assert run.summary is not None
    assert run.summary.transactions == 500
    assert_consistent(run)


def test_ctrl_c_writes_what_was_measured_and_exits_130(tmp_path: Path) -> None:
    db = f"sqlite://{tmp_path / 'sb.db'}"
    assert oltplab_cmd("prepare", "--db", db, *SMALL, cwd=tmp_path).returncode == 0
    child = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "run", "--db", db, "--time=60", "--out=r", *SMALL],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_intervals(child, tmp_path / "r", 2)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "Traceback" not in err
    assert "INCOMPLETE (interrupted)" in out
    run = load_run(tmp_path / "r")
    assert run.complete is False
    assert run.doc.stop_reason == "interrupted"
    assert_consistent(run)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["complete"] is False


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--threads=0"], "--threads"),
        (["run", "--table-size=-1"], "--table-size"),
        (["run", "--bogus=1"], "unknown option --bogus"),
        (["run", "no_such_workload"], "unknown workload"),
        (["run", "--db", "sqlite:///nonexistent/dir/x.db"], "prepare"),
        (["run", "--db", "sqlite://not-sqlite.db"], "not-sqlite.db"),
        (["run", "--db", "sqlite://empty.db"], "prepare"),
        (["run", "--out", "a-file/run"], "a-file"),
        (["prepare", "--db", "nonsense"], "nonsense"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "not-sqlite.db").write_text("hello\n")
    (tmp_path / "a-file").write_text("")
    import sqlite3

    sqlite3.connect(tmp_path / "empty.db").close()
    p = oltplab_cmd(*args, cwd=tmp_path)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("oltplab: error: ")
    assert needle in lines[0]
    assert _run_dirs(tmp_path) == []


def test_prepare_run_cleanup_with_an_explicit_db(tmp_path: Path) -> None:
    db = f"sqlite://{tmp_path / 'sb.db'}"
    prepared = oltplab_cmd("prepare", "--db", db, "--tables=2", *SMALL, cwd=tmp_path)
    assert prepared.returncode == 0, prepared.stderr
    assert "Creating table 'sbtest2'..." in prepared.stdout
    ran = oltplab_cmd("run", "--db", db, "--tables=2", "--time=1", "--out=r", *SMALL, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert_consistent(load_run(tmp_path / "r"))
    assert oltplab_cmd("cleanup", "--db", db, "--tables=2", cwd=tmp_path).returncode == 0
    after = oltplab_cmd("run", "--db", db, "--time=1", cwd=tmp_path)
    assert after.returncode == 2


def test_help(tmp_path: Path) -> None:
    top = oltplab_cmd("--help", cwd=tmp_path)
    assert top.returncode == 0
    assert "sqlite:///" in top.stdout
    workload = oltplab_cmd("run", "select_random_ranges", "--help", cwd=tmp_path)
    assert workload.returncode == 0
    assert "--number-of-ranges=N" in workload.stdout
    assert "--table-size=N" in workload.stdout
