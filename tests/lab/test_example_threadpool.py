"""examples/labs/threadpool.toml end to end in its small setting, in a process of its own
(it pins itself): 2 MariaDB configs x 2 thread counts x 2 repeats -> 8 run directories in
interleaved order, each showing its thread_handling as the server reported it, pinned as
configured, with metrics on the intervals' grid; the printed table is the run directories'."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from oltplab.documents.lab import read_lab_document
from oltplab.lab.summary import estimate
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "labs" / "threadpool.toml"


def _t_s(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [row["t_s"] for row in csv.DictReader(f)]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_threadpool_small_end_to_end(lab_dir: Path, mariadb: MariaDBServer) -> None:
    del mariadb  # only for the packages: the lab starts its own server
    argv = ["lab", "run", str(EXAMPLE), "--scale", "small", "--out", str(lab_dir)]
    done = subprocess.run(
        [sys.executable, "-m", "oltplab", *argv],
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = read_lab_document(lab_dir)
    assert doc.status == "done"
    assert len(doc.cells) == 8
    assert all(c.status == "done" for c in doc.cells)
    assert len(doc.prepared) == 1  # one server, one data shape: prepared once

    runs = {c.id: load_run(lab_dir / str(c.run_dir)) for c in doc.cells}
    assert all(r.complete for r in runs.values())
    started = [str(runs[cell_id].document["started_at"]) for cell_id in doc.plan]
    assert started == sorted(started)  # ran in the planned (interleaved) order
    assert [doc.cell(i).config for i in doc.plan[:4]] == [
        "one-thread-per-connection",
        "pool-of-threads",
    ] * 2
    for cell in doc.cells:
        run = runs[cell.id].document
        assert run["target"]["server_variables"]["thread_handling"] == cell.config
        assert run["lab"]["cell"] == cell.id
        assert run["lab"]["config_variables"] == {"thread_handling": cell.config}
        assert run["pinning"]["client_cpus_allowed"] == "1"
        assert run["pinning"]["server_cpus_allowed"] == "0"
        intervals = _t_s(runs[cell.id].path / "intervals.csv")
        assert len(intervals) >= 4
        for name in ("system.csv", "server.csv"):
            assert _t_s(runs[cell.id].path / name) == intervals

    # The printed tables hold the run directories' own numbers.
    for threads in (4, 32):
        for config in ("one-thread-per-connection", "pool-of-threads"):
            tps = [
                float(runs[c.id].document["summary"]["tps"])  # type: ignore[index]
                for c in doc.cells
                if c.threads == threads and c.config == config
            ]
            e = estimate(tps)
            assert e is not None
            assert e.text(1) in done.stdout
    assert "tps relative to mariadb/one-thread-per-connection" in done.stdout
