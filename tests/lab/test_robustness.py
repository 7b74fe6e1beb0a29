"""Resume after SIGKILL, Ctrl-C, a config the server refuses, a changed lab file."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.documents.lab import read_lab_document
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, open_server
from tests.lab.conftest import write_lab

LAB = """\
[lab]
name = "robust"
time = 3
repeats = 2
metrics = ["system"]

[servers.mdb]
engine = "mariadb"

[[workloads]]
name = "oltp_point_select"
threads = [2]
options = { tables = 1, table_size = 200 }
"""


def _lab_process(lab_file: Path, lab_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "oltplab", "lab", "run", str(lab_file), "--out", str(lab_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_running_cell(lab_dir: Path, index: int, timeout_s: float = 120.0) -> str:
    """Waits until the plan's `index`th cell runs and has measured an interval."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            doc = json.loads((lab_dir / "lab.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if doc is not None:
            cell = next(c for c in doc["cells"] if c["id"] == doc["plan"][index])
            intervals = lab_dir / "runs" / cell["id"] / "intervals.csv"
            if (
                cell["status"] == "running"
                and intervals.exists()
                and len(intervals.read_text(encoding="utf-8").splitlines()) >= 2
            ):
                return str(cell["id"])
        time.sleep(0.1)
    raise AssertionError(f"cell {index} never ran")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sigkill_mid_cell_then_resume(lab_dir: Path, mariadb: MariaDBServer) -> None:
    del mariadb
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", LAB)
    proc = _lab_process(lab_file, lab_dir)
    killed = _wait_for_running_cell(lab_dir, 1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = read_lab_document(lab_dir)
    first = before.cell(before.plan[0])
    assert first.status == "done"
    assert before.cell(killed).status == "running"  # what the dead process left

    again = _lab_process(lab_file, lab_dir)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    after = read_lab_document(lab_dir)
    assert [c.status for c in after.cells] == ["done"] * 2
    assert after.cell(first.id).started_at == first.started_at  # not run again
    assert load_run(lab_dir / "runs" / killed).complete
    aside = lab_dir / "runs" / f"{killed}.attempt-1"
    assert (aside / "intervals.csv").exists()  # what was measured before the kill is kept
    assert "oltp_point_select: tps" in out

    # A changed lab file refuses to resume, in one line; one that only adds cells resumes.
    changed = write_lab(lab_file, LAB.replace("time = 3", "time = 4"))
    refused = _lab_process(changed, lab_dir)
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2
    assert err.strip().count("\n") == 0
    assert "[lab] time changed from 3.0 to 4.0" in err


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ctrl_c_interrupts_the_cell_and_stops_the_server(
    lab_dir: Path, mariadb: MariaDBServer
) -> None:
    del mariadb
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", LAB)
    proc = _lab_process(lab_file, lab_dir)
    cell_id = _wait_for_running_cell(lab_dir, 0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    doc = read_lab_document(lab_dir)
    assert doc.status == "interrupted"
    assert doc.cell(cell_id).status == "interrupted"
    run = load_run(lab_dir / "runs" / cell_id)
    assert not run.complete
    assert run.doc.stop_reason == "interrupted"
    assert not open_server(lab_dir / "servers" / "mdb").is_running()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_server_crash_mid_cell_is_named_in_the_cells_error(
    lab_dir: Path, mariadb: MariaDBServer
) -> None:
    """A crash (here SIGSEGV, which MariaDB reports as it does its own: "got signal 11")
    fails the cell, naming what the server's log said, although the client reconnected and
    its run completed; the next cell starts the server again and runs."""
    del mariadb
    longer = LAB.replace("time = 3", "time = 6")
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", longer)
    proc = _lab_process(lab_file, lab_dir)
    crashed = _wait_for_running_cell(lab_dir, 0)
    pid = open_server(lab_dir / "servers" / "mdb").pid()
    assert pid is not None
    os.kill(pid, signal.SIGSEGV)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    doc = read_lab_document(lab_dir)
    cell = doc.cell(crashed)
    assert cell.status == "failed"
    assert cell.error is not None
    assert "MariaDB exited during the cell (" in cell.error, cell.error
    assert "got signal 11" in cell.error, cell.error
    assert f"see {lab_dir / 'servers' / 'mdb' / 'server.log'}" in cell.error
    assert [c.status for c in doc.cells if c.id != crashed] == ["done"]


REFUSED = """\
[lab]
name = "refused"
time = 2
metrics = []

[servers.mdb]
engine = "mariadb"

[servers.mdb.configs.good]
thread_handling = "one-thread-per-connection"

[servers.mdb.configs.bad]
no_such_variable = 1

[[workloads]]
name = "oltp_point_select"
threads = [1, 2]
options = { tables = 1, table_size = 100 }
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_refused_config_fails_its_cells_and_the_lab_goes_on(
    lab_dir: Path, mariadb: MariaDBServer, capsys: pytest.CaptureFixture[str]
) -> None:
    del mariadb
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", REFUSED)
    assert main(["lab", "run", str(lab_file), "--out", str(lab_dir), "--quiet"]) == 1
    doc = read_lab_document(lab_dir)
    statuses = {c.id: c.status for c in doc.cells}
    assert statuses == {
        "mdb.good.oltp_point_select.t1.r1": "done",
        "mdb.bad.oltp_point_select.t1.r1": "failed",
        "mdb.good.oltp_point_select.t2.r1": "done",
        "mdb.bad.oltp_point_select.t2.r1": "failed",
    }
    for cell in doc.cells:
        if cell.status == "failed":
            assert cell.error is not None
            assert "unknown variable 'no_such_variable=1'" in cell.error  # the server's log
    assert doc.status == "failed"
    assert "cell(s) failed" in capsys.readouterr().err
    assert not any(p.is_dir() for p in (lab_dir / "runs").glob("mdb.bad.*"))
    assert (lab_dir / "summary.txt").exists()
