"""End to end: the real sysbench 1.0.20 (Debian's package) runs against the session's
MariaDB with --report-interval=1 and --histogram; `python -m oltplab import` reads its
output; the run directory holds the numbers sysbench printed."""

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

import oltplab
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer
from tests.known import known
from tests.sysbench_compat.test_vs_sysbench import Both
from tests.test_schema import validate

DATA = ["--tables=1", "--table-size=1000"]


@pytest.fixture(scope="module")
def sysbench_log(mariadb_empty_db: MariaDBServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sysbench's output of a 3-second run, in a file."""
    tmp = tmp_path_factory.mktemp("import")
    sysbench = Both(mariadb_empty_db.url, tmp)
    sysbench.real(*DATA, "prepare")
    try:
        options = ["--threads=2", "--time=3", "--report-interval=1", "--histogram"]
        text = sysbench.real(*DATA, *options, "run")
    finally:
        sysbench.real(*DATA, "cleanup")
    path = tmp / "sysbench.log"
    path.write_text(text)
    return path


def _import(log: Path, out: Path) -> subprocess.CompletedProcess[str]:
    package_root = str(Path(oltplab.__file__).resolve().parent.parent)
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")])
    }
    return subprocess.run(
        [sys.executable, "-m", "oltplab", "import", str(log), "--out", str(out), "--workload=x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _printed(text: str, label: str) -> str:
    """The value sysbench printed after `label` in its final report."""
    line = next(line for line in text.splitlines() if line.strip().startswith(label))
    return line.split(":", 1)[1].split()[0]


def _per_sec(text: str, label: str) -> float:
    """The rate sysbench printed in parentheses after `label`: `(583.70 per sec.)`."""
    line = next(line for line in text.splitlines() if line.strip().startswith(label))
    return float(line.split("(", 1)[1].split()[0])


def test_import_reproduces_what_sysbench_printed(sysbench_log: Path, tmp_path: Path) -> None:
    done = _import(sysbench_log, tmp_path / "run")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(f"Imported {sysbench_log} into {tmp_path / 'run'}: ")
    assert done.stdout.endswith(" intervals, latency.hlog, complete\n")

    text = sysbench_log.read_text()
    run = load_run(tmp_path / "run")
    validate(json.loads((tmp_path / "run" / "run.json").read_text()))
    s = run.summary
    assert s is not None
    assert run.complete
    assert s.transactions == int(_printed(text, "transactions:"))
    assert s.tps == _per_sec(text, "transactions:")
    assert s.qps == _per_sec(text, "queries:")
    assert s.queries.total == int(_printed(text, "total:"))
    assert s.duration_s == float(_printed(text, "total time:").rstrip("s"))
    latency = s.latency_ms
    shown = ((latency.min, "min:"), (latency.mean, "avg:"), (latency.max, "max:"))
    for value, label in (*shown, (latency.sum, "sum:")):
        assert value == float(_printed(text, label)), label
    assert latency.p95 == float(_printed(text, "95th percentile:"))
    assert run.options["threads"] == 2
    assert run.workload == "x"

    # The intervals: one per printed line. Their counts add up to the total within what
    # sysbench's printing allows: times rounded to the second (each boundary off by up to
    # 0.5 s, so a row's count by its rate's change times 0.5 s), rates to 2 decimals (each
    # count rounded), and no row for the time after the last printed line.
    df = run.intervals
    assert len(df) == text.count("] thds: ") >= 1
    assert df["t_s"].is_monotonic_increasing
    assert (df["t_s"].diff().fillna(df["t_s"]) == df["interval_s"]).all()
    tps = df["tps"].tolist()
    boundaries = 0.5 * (sum(abs(a - b) for a, b in pairwise(tps)) + tps[-1])
    slack = boundaries + len(df)
    tail_s = s.duration_s - df["t_s"].iloc[-1] + 0.5
    missing = s.transactions - int(df["transactions"].sum())
    assert -slack <= missing <= 2 * max(tps) * tail_s + slack
    ambiguous = (df["interval_s"] == 0).any()
    assert run.flags == (("interval_times_ambiguous",) if ambiguous else ())

    # The --histogram block: every event, in run.json and in latency.hlog.
    rows = known(s.histogram_ms)
    assert sum(count for _, count in rows) == s.transactions
    (entry,) = run.hlog().entries
    assert entry.decode().get_total_count() == s.transactions
