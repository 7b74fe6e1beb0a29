"""Every cell starts from the prepared data (CHECKSUM TABLE on MariaDB, an ordered hash on
PostgreSQL), prepare runs once per server, and write workloads show log bytes in server.csv."""

import csv
from pathlib import Path
from typing import Any

import pytest

import oltplab.lab.cell as cell_module
from oltplab.documents.lab import CellRecord
from oltplab.lab.execute import run_lab
from oltplab.lab.labfile import read_lab_text
from oltplab.servers import MariaDBServer, PostgresServer
from oltplab.servers.base import ManagedServer

LAB = """\
[lab]
name = "restore"
time = 2
repeats = 2
restore = "auto"

[servers.mdb]
engine = "mariadb"

[servers.pg]
engine = "postgresql"

[[workloads]]
name = "oltp_delete"
threads = [2]
options = { tables = 2, table_size = 500 }

[[workloads]]
name = "oltp_insert"
threads = [2]
options = { tables = 2, table_size = 500 }
"""


def checksum(server: ManagedServer, tables: tuple[str, ...] = ("sbtest1", "sbtest2")) -> str:
    """CHECKSUM TABLE on MariaDB; on PostgreSQL an md5 of each table's rows in a fixed order."""
    if server.engine == "mariadb":
        rows = server.query(f"CHECKSUM TABLE {', '.join(tables)}", database="sbtest")
        return ",".join(r[1] for r in rows)
    sql = " || ".join(
        f"(SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM {name} t)"
        for name in tables
    )
    return server.query(f"SELECT {sql}", database="sbtest")[0][0]


def _names(cmdline: Path, lab_dir: Path) -> bool:
    """True if the process's command line names the lab directory (a server left running)."""
    try:
        return f"{lab_dir}/" in cmdline.read_bytes().decode(errors="replace")
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_cells_start_from_the_prepared_data(
    lab_dir: Path,
    mariadb: MariaDBServer,
    postgres: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    del mariadb, postgres  # the lab starts its own servers
    seen: dict[str, list[str]] = {"mdb": [], "pg": []}
    original = cell_module.execute_cell

    def checked(ctx: cell_module.LabContext, cell: CellRecord, url: str) -> Any:
        server = ctx.servers.current(cell.server)
        assert server is not None
        seen[cell.server].append(checksum(server))
        return original(ctx, cell, url)

    monkeypatch.setattr("oltplab.lab.execute.execute_cell", checked)
    spec = read_lab_text(LAB, "restore.toml")
    outcome = run_lab(spec, Path("restore.toml"), LAB, lab_dir, quiet=True)
    assert not outcome.interrupted
    assert [c.status for c in outcome.doc.cells] == ["done"] * 8
    assert sorted(p.server for p in outcome.doc.prepared) == ["mdb", "pg"]  # once per server
    for server, sums in seen.items():
        assert len(sums) == 4
        assert len(set(sums)) == 1, f"{server}: a cell started from changed data: {sums}"
    # Restored before every cell but each server's first (which follows its prepare).
    restored = [c for c in outcome.doc.cells if c.restore_s is not None]
    assert len(restored) == 6
    # Restores kill the server (its data is discarded) yet every restart after one is clean:
    # the snapshot's redo/WAL came back with the data, so there is no crash recovery.
    mdb_log = (lab_dir / "servers" / "mdb" / "server.log").read_text(errors="replace")
    assert mdb_log.count("ready for connections") >= 4
    assert "crash recovery" not in mdb_log
    pg_log = (lab_dir / "servers" / "pg" / "server.log").read_text(errors="replace")
    assert pg_log.count("database system was shut down at") >= 4
    assert "not properly shut down" not in pg_log
    assert "automatic recovery" not in pg_log
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if _names(p, lab_dir)]
    # Write workloads write log: server.csv shows it per second.
    for cell, column in (("mdb", "innodb_log_written_bytes_per_s"), ("pg", "wal_bytes_per_s")):
        run_dir = lab_dir / "runs" / f"{cell}.default.oltp_insert.t2.r1"
        with (run_dir / "server.csv").open(encoding="utf-8") as f:
            values = [float(r[column]) for r in csv.DictReader(f) if r[column]]
        assert values
        assert max(values) > 0
