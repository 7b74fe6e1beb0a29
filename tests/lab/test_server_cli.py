"""`oltplab server start|status|list|stop` on a real MariaDB, with a setting and pinning."""

import json
from pathlib import Path

import pytest

from oltplab.cli.main import main
from oltplab.servers import MariaDBServer, open_server


@pytest.mark.timeout(300)
def test_server_commands(
    servers_root: Path, mariadb: MariaDBServer, capsys: pytest.CaptureFixture[str]
) -> None:
    del mariadb  # its packages; this test starts its own server
    base = servers_root / "cli-server"
    args = ["server", "start", str(base), "--engine", "mariadb", "--set", "max_heap_table_size=32M"]
    try:
        assert main([*args, "--cpus", "0"]) == 0
        out = capsys.readouterr().out
        assert "pinned to CPUs 0" in out
        assert "mysql://sbtest:***@127.0.0.1:" in out
        server = open_server(base)
        assert f"mysql://sbtest:***@localhost/sbtest?socket={server.socket_path}" in out
        assert server.query("SELECT @@max_heap_table_size")[0][0] == str(32 << 20)

        assert main(["server", "status", str(base), "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["running"] is True
        assert status["engine"] == "mariadb"
        assert status["variables"] == {"max_heap_table_size": "32M"}
        assert "***" in status["url"]
        assert "***" in status["socket_url"]
        assert "?socket=" in status["socket_url"]

        assert main(["server", "list", str(servers_root), "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert str(base) in [s["dir"] for s in listed]

        assert main(["server", "stop", str(base)]) == 0
        assert main(["server", "status", str(base)]) == 1
        assert "stopped" in capsys.readouterr().out
    finally:
        open_server(base).stop()


def test_server_start_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["server", "start", str(tmp_path / "s")]) == 2
    assert "give --engine mariadb|postgresql" in capsys.readouterr().err
    assert main(["server", "start", str(tmp_path / "s"), "--engine", "mariadb", "--set", "x"]) == 2
    assert "--set name=value" in capsys.readouterr().err
