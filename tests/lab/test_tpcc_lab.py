"""A TPC-C lab on real servers: prepared once per server, every cell starts from the
prepared warehouses (they all write), and the printed table carries tpmC."""

from pathlib import Path
from typing import Any

import pytest

import oltplab.lab.cell as cell_module
from oltplab.documents.lab import CellRecord
from oltplab.lab.execute import run_lab
from oltplab.lab.labfile import read_lab_text
from oltplab.lab.summary import lab_summary_text
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer, PostgresServer
from tests.known import known
from tests.lab.test_restore_metrics import checksum

# Every table a TPC-C transaction writes (item is read-only).
TPCC_TABLES = (
    "warehouse1",
    "district1",
    "customer1",
    "history1",
    "orders1",
    "new_orders1",
    "order_line1",
    "stock1",
)

LAB = """\
[lab]
name = "tpcc"
time = 3
repeats = 2
restore = "auto"
metrics = []

[servers.SERVER]
engine = "ENGINE"

[[workloads]]
name = "tpcc"
threads = [2]
options = { warehouses = 1 }
"""


def _run_tpcc_lab(lab_dir: Path, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server_name = "mdb" if engine == "mariadb" else "pg"
    text = LAB.replace("SERVER", server_name).replace("ENGINE", engine)
    seen: list[str] = []
    original = cell_module.execute_cell

    def checked(ctx: cell_module.LabContext, cell: CellRecord, url: str) -> Any:
        server = ctx.servers.current(cell.server)
        assert server is not None
        seen.append(checksum(server, TPCC_TABLES))
        return original(ctx, cell, url)

    monkeypatch.setattr("oltplab.lab.execute.execute_cell", checked)
    spec = read_lab_text(text, "tpcc.toml")
    outcome = run_lab(spec, Path("tpcc.toml"), text, lab_dir, quiet=True)
    assert not outcome.interrupted
    assert [c.status for c in outcome.doc.cells] == ["done", "done"]
    assert [(p.server, p.family) for p in outcome.doc.prepared] == [(server_name, "tpcc")]
    assert len(seen) == 2
    assert seen[0] == seen[1], f"a cell started from changed data: {seen}"
    # The first cell follows the prepare; the second found written data and restored it.
    assert [c.restore_s is not None for c in outcome.doc.cells] == [False, True]
    tpmc = []
    for cell in outcome.doc.cells:
        assert cell.run_dir is not None
        tpcc = known(known(load_run(lab_dir / cell.run_dir).summary).tpcc)
        assert tpcc.by_type.new_order.count > 0
        tpmc.append(tpcc.tpmC)
    text_out = lab_summary_text(lab_dir, outcome.doc)
    mean = sum(tpmc) / 2
    assert "tpcc: tpmC (New-Orders/min" in text_out
    assert f"{mean:.0f} ±" in text_out  # the table's number is the run directories' mean


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_tpcc_lab_on_mariadb(
    lab_dir: Path, mariadb: MariaDBServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    del mariadb  # the lab starts its own server
    _run_tpcc_lab(lab_dir, "mariadb", monkeypatch)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_tpcc_lab_on_postgresql(
    lab_dir: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    del postgres
    _run_tpcc_lab(lab_dir, "postgresql", monkeypatch)
