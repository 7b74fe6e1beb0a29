"""`max_connections` written in a server's `settings` (where server variables go) is the
server's max_connections on real MariaDB and PostgreSQL labs: the server runs with it, and the
engine's pre-flight check refuses a cell that needs more connections, before connecting."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.documents.lab import read_lab_document
from oltplab.rundir import load_run
from tests.known import known
from tests.lab.conftest import write_lab

MAX_CONNECTIONS = 40
LAB = f"""\
[lab]
name = "maxconn"
time = 1
metrics = ["system"]

[servers.mdb]
engine = "mariadb"
settings = {{ max_connections = {MAX_CONNECTIONS}, innodb_buffer_pool_size = "32M" }}

[servers.pg]
engine = "postgresql"
settings = {{ max_connections = "{MAX_CONNECTIONS}", shared_buffers = "32MB" }}

[[workloads]]
name = "oltp_point_select"
threads = [2, {MAX_CONNECTIONS + 5}]
options = {{ tables = 1, table_size = 100 }}
"""


@pytest.mark.timeout(300)
def test_max_connections_in_settings(lab_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab_file = write_lab(lab_dir.parent / f"{lab_dir.name}.toml", LAB)
    assert main(["lab", "run", str(lab_file), "--out", str(lab_dir), "--quiet"]) == 1
    capsys.readouterr()
    doc = read_lab_document(lab_dir)
    assert [s.max_connections for s in doc.lab.servers] == [MAX_CONNECTIONS] * 2
    for cell in doc.cells:
        if cell.threads == 2:
            assert cell.status == "done", cell.error
            run = load_run(lab_dir / "runs" / cell.id)
            variables = known(run.doc.target.server_variables)
            assert variables["max_connections"] == str(MAX_CONNECTIONS), cell.server
        else:  # refused by the pre-flight check, from the server's own max_connections
            assert cell.status == "failed"
            assert cell.error is not None
            assert f"--threads={MAX_CONNECTIONS + 5} needs" in cell.error, cell.error
            assert "raise max_connections" in cell.error
