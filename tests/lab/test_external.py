"""An external server: the lab runs its cells against the URL as it is (no restart, no
restore, no prepare), and never writes the URL's password."""

from pathlib import Path

import pytest

import oltplab
from oltplab.documents.lab import read_lab_document
from oltplab.lab.execute import run_lab
from oltplab.lab.labfile import read_lab_text
from oltplab.rundir import load_run
from oltplab.servers import MariaDBServer
from tests.known import known


@pytest.mark.timeout(300)
def test_external_server(mariadb_empty_db: MariaDBServer, servers_root: Path) -> None:
    server = mariadb_empty_db
    oltplab.prepare("oltp_point_select", db=server.url, tables=1, table_size=100)
    text = f"""\
[lab]
name = "ext"
time = 1

[servers.ext]
engine = "external"
url = "{server.url}"

[[workloads]]
name = "oltp_point_select"
threads = [1]
options = {{ tables = 1, table_size = 100 }}
"""
    lab_dir = servers_root / "lab-external"
    outcome = run_lab(read_lab_text(text, "ext.toml"), Path("ext.toml"), text, lab_dir, quiet=True)
    assert [c.status for c in outcome.doc.cells] == ["done"]
    assert outcome.doc.prepared == []
    assert not (lab_dir / "servers").exists()
    run = load_run(lab_dir / "runs" / "ext.default.oltp_point_select.t1.r1")
    assert run.complete
    assert known(run.doc.pinning).server_cpus_allowed is None
    assert (run.path / "server.csv").exists()
    kept = [
        lab_dir / "lab.json",
        lab_dir / "lab.toml",
        lab_dir / "summary.txt",
        run.path / "run.json",
    ]
    for path in kept:
        assert server.password not in path.read_text(encoding="utf-8")
    assert read_lab_document(lab_dir).lab.servers[0].url == server.redacted_url
